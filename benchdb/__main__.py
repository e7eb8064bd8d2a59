from benchdb.cli import entry

entry()
