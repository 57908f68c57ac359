"""`python -m agents.governance`: one message, JSONL files, and every bad-input path (one line naming the
file, line and field; exit status 2; never a traceback). Raw personal data never reaches the output."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from agents.governance.__main__ import app

DEMO = ("Hi, I'm Jane Doe (jane.doe@example.org, +1 415 555 0134). Your bias study is garbage and I'll see "
        "you in court.")
RAW_VALUES = ("Jane Doe", "jane.doe@example.org", "+1 415 555 0134", "Jane", "Doe")

runner = CliRunner()


def one_line_error(result) -> str:
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_module_entry_point_prints_the_issue_example_as_json():
    proc = subprocess.run([sys.executable, "-m", "agents.governance", "--json", DEMO],
                          capture_output=True, text=True, check=True, timeout=120)
    data = json.loads(proc.stdout)
    assert not any(raw in proc.stdout + proc.stderr for raw in RAW_VALUES)
    assert data["sentiment"]["label"] == "negative"
    assert data["decision"] == "escalate"
    assert any(reason.startswith("legal threat") for reason in data["reasons"])
    assert {e["type"] for e in data["entities"]} == {"PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER"}


def test_table_output_shows_the_decision_and_no_raw_values():
    result = runner.invoke(app, [DEMO])
    assert result.exit_code == 0, result.output
    assert "escalate" in result.output and "<PERSON_1>" in result.output
    assert not any(raw in result.output for raw in RAW_VALUES)


def write_lines(path, lines):
    path.write_bytes(b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n"
                              for line in lines))


def test_input_file_gives_one_json_line_per_row(tmp_path):
    src = tmp_path / "in.jsonl"
    write_lines(src, [{"id": "a", "feedback": DEMO}, b"", {"id": "b", "feedback": "The survey sample is tiny."},
                      {"feedback": "Buy replica watches at 90% off!"}])
    result = runner.invoke(app, ["--input", str(src), "--json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r.get("id"), r["line"], r["decision"]) for r in records] == [
        ("a", 1, "escalate"), ("b", 3, "answer"), (None, 4, "reject")]
    assert not any(raw in result.output for raw in RAW_VALUES)


def test_output_file_holds_the_results(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_lines(src, [{"id": "a", "feedback": DEMO}])
    result = runner.invoke(app, ["--input", str(src), "--output", str(dst)])
    assert result.exit_code == 0, result.output
    assert json.loads(dst.read_text())["decision"] == "escalate"
    assert "jane.doe" not in dst.read_text()


def test_table_output_for_a_file(tmp_path):
    src = tmp_path / "in.jsonl"
    write_lines(src, [{"id": "row-1", "feedback": "The survey sample is tiny."}])
    result = runner.invoke(app, ["--input", str(src)])
    assert result.exit_code == 0 and "row-1" in result.output and "answer" in result.output


@pytest.mark.parametrize(("line", "message"), [
    (b'{"feedback": "caf\xe9 au lait"}', "in.jsonl:2: not valid UTF-8 (byte 0xe9 at column 18)"),
    (b'{"feedback": ', "in.jsonl:2: not valid JSON"),
    (b'["a list"]', "in.jsonl:2: expected a JSON object, got list"),
    (b'{"text": "no feedback"}', "in.jsonl:2: field 'feedback' is missing"),
    (b'{"feedback": 42}', "in.jsonl:2: field 'feedback' must be a string, got int"),
])
def test_a_bad_row_stops_with_one_line_naming_file_line_and_field(tmp_path, line, message):
    src = tmp_path / "in.jsonl"
    write_lines(src, [{"feedback": "The survey sample is tiny."}, line])
    assert message in one_line_error(runner.invoke(app, ["--input", str(src), "--json"]))


def test_skip_invalid_reports_bad_rows_and_governs_the_rest(tmp_path):
    src = tmp_path / "in.jsonl"
    write_lines(src, [b'{"feedback": "\xff\xfe"}', {"feedback": "The survey sample is tiny."}])
    result = runner.invoke(app, ["--input", str(src), "--json", "--skip-invalid"])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.stderr and "in.jsonl:1: not valid UTF-8" in result.stderr
    assert [json.loads(line)["line"] for line in result.stdout.splitlines()] == [2]


@pytest.mark.parametrize(("args", "message"), [
    ([], "give either a TEXT argument or --input FILE.jsonl"),
    (["text", "--input", "x.jsonl"], "give either a TEXT argument or --input FILE.jsonl"),
    (["text", "--output", "out.jsonl"], "--output needs --input"),
    (["--input", "does/not/exist.jsonl"], "does/not/exist.jsonl: cannot read (No such file or directory)"),
])
def test_bad_arguments_are_one_line_errors(args, message):
    assert message in one_line_error(runner.invoke(app, args))


def test_a_bad_config_file_is_a_one_line_error(tmp_path):
    config = tmp_path / "governance.yaml"
    config.write_bytes(b"pii: {entities: []}\n")
    line = one_line_error(runner.invoke(app, ["--config", str(config), "text"]))
    assert f"{config}: field 'pii.entities'" in line
