from conftest import REPO


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    command = [line for line in ci if "python3 -m venv" in line and not line.startswith("#")]
    assert len(command) == 1
    readme = (REPO / "README.md").read_text()
    test_section = readme.split("## Set up and run the tests", 1)[1]
    assert command[0] in test_section.split("```")[1]
