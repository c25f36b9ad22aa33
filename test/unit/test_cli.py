"""The humanoid-balance command line, run as a user would run it."""
import re
import subprocess

import pytest

from humanoid_balance.bench import EXPERIMENTS
from humanoid_balance.cli import main
from humanoid_balance.resources import executable
from support.model_fixtures import DATA, REPO, ROBOT_FILES

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))  # the reference pages the README links to

EXECUTABLE = str(executable("humanoid-balance"))


def run(*args):
    assert EXECUTABLE, "humanoid-balance is not installed next to the test interpreter"
    return subprocess.run([EXECUTABLE, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["crank_slider", "kangaroo_like"])
def test_check_model_summarises_a_valid_robot(name):
    result = run("check-model", *ROBOT_FILES[name], "--samples", "10")
    assert result.returncode == 0, result.stderr
    assert "constraint rows" in result.stdout and "(= passive joints)" in result.stdout
    residual = float(result.stdout.split("residual after closing")[1].split()[0])
    assert residual < 1e-10


def test_check_model_reports_a_bad_file_without_traceback():
    bad = DATA / "bad_loops" / "unknown_frame.loops.yaml"
    result = run("check-model", DATA / "crank_slider.urdf", bad)
    assert result.returncode == 1
    assert result.stderr.startswith(f"error: {bad}: loops[0] 'crank': frame_a 'crank_pni'")
    assert "Traceback" not in result.stderr


def test_a_model_that_is_no_file_is_looked_up_in_example_robot_data(tmp_path, capsys):
    """import-sdf (as init and check-model) takes example-robot-data's models by name; a name that is neither a file
    nor one of them is one line naming the closest."""
    assert main(["import-sdf", "cassie_v3.sdf", "--output", str(tmp_path / "cassie")]) == 1
    error = capsys.readouterr().err
    assert len(error.splitlines()) == 1 and not (tmp_path / "cassie").exists()
    assert error.startswith("error: cassie_v3.sdf: no such file, nor a model of example-robot-data (did you mean "
                            "cassie_v2, ")


def test_demo_refuses_a_video_format_it_cannot_write():
    """The closed-loop demo itself is tested in test_demo.py; here, a bad option fails before anything starts."""
    result = run("demo", "--video", "run.avi")
    assert result.returncode == 2
    assert "--video run.avi: give a .gif or .mp4 file name" in result.stderr


@pytest.mark.parametrize("command", ["", "init", "demo", "bench", "check-model", "import-sdf"])
def test_help_is_plain_text_about_the_users_machine(command, capsys):
    """--help is read in a terminal: no reStructuredText markup (``…``), nothing about the machine it was written
    on."""
    with pytest.raises(SystemExit) as exit:
        main([command, "--help"] if command else ["--help"])
    text = capsys.readouterr().out
    assert exit.value.code == 0 and text.startswith("usage: humanoid-balance")
    assert "``" not in text
    assert not re.search(r"\b(this|our)\b[^.;()]*\bmachine\b|\d-core", text), text


def test_the_readme_names_the_commands_and_experiments_there_are(capsys):
    """Every ``humanoid-balance COMMAND`` the README and docs/ name runs (its --help), and the bench paragraph
    (docs/benchmarks.md) names every experiment ``bench`` offers."""
    text = "\n".join(path.read_text() for path in [README, *DOCS])
    for command in sorted(set(re.findall(r"humanoid-balance ([a-z][a-z-]*)", text))):
        with pytest.raises(SystemExit) as exit:
            main([command, "--help"])
        assert exit.value.code == 0, f"README names `humanoid-balance {command}`: {capsys.readouterr().err}"
    bench = (REPO / "docs" / "benchmarks.md").read_text()
    paragraph = bench[bench.index("`humanoid-balance bench` reproduces"):]
    paragraph = paragraph[:paragraph.index("\n\n")]
    assert [name for name in EXPERIMENTS if f"`{name}`" not in paragraph] == []
