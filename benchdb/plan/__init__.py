"""Planning and driving runs: config files, suites, scenario plans, the run driver, quickstart."""
