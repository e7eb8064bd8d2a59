from benchdb.cli import main

main(prog_name="benchdb")
