"""`python -m rewards score`: single replies, files, and every bad-input path (one line, non-zero exit)."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from rewards.cli import app

from .test_reward import FEEDBACK, GENUINE

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["score", *args])


def one_line_error(result) -> str:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_module_entry_point_prints_json():
    proc = subprocess.run(
        [sys.executable, "-m", "rewards", "score", "--json", "--feedback", FEEDBACK, "--response", GENUINE],
        capture_output=True, text=True, check=True,
    )
    data = json.loads(proc.stdout)
    assert data["total"] >= 0.5
    for name in ["length", "tone", "integrity", "overselling", "acknowledgment", "privacy", "coherence", "role"]:
        assert set(data["components"][name]) == {"score", "weight", "explanation"}


def test_table_output_names_every_component():
    result = run("--feedback", FEEDBACK, "--response", "Thanks! Our results are guaranteed and 100% production-ready.")
    assert result.exit_code == 0
    for name in ["length", "tone", "integrity", "overselling", "acknowledgment", "privacy"]:
        assert name in result.output
    assert "reward total -1.000" in result.output


def write_rows(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


def test_file_scores_rows_and_writes_output(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_rows(src, [{"feedback": FEEDBACK, "response": GENUINE, "id": "a"},
                     {"feedback": FEEDBACK, "response": "ok", "id": "b"}])
    result = run("--input", str(src), "--output", str(dst), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output.splitlines()[0])
    assert summary["n"] == 2 and summary["skipped"] == 0
    rows = [json.loads(line) for line in dst.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]  # extra fields pass through
    assert rows[0]["reward"]["total"] > rows[1]["reward"]["total"]
    assert summary["mean_total"] == pytest.approx((rows[0]["reward"]["total"] + rows[1]["reward"]["total"]) / 2)


@pytest.mark.parametrize("bad_row, message", [
    ("{not json", "not valid JSON"),
    (json.dumps({"feedback": FEEDBACK}), "field 'response'"),
    (json.dumps({"feedback": FEEDBACK, "response": 3}), "field 'response'"),
    (json.dumps(["a", "b"]), "expected a JSON object"),
])
def test_bad_row_stops_with_file_and_line(tmp_path, bad_row, message):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    dst.write_text("precious earlier output\n")
    write_rows(src, [{"feedback": FEEDBACK, "response": GENUINE}, "", bad_row])
    line = one_line_error(run("--input", str(src), "--output", str(dst)))
    assert f"{src}:3:" in line and message in line
    assert dst.read_text() == "precious earlier output\n"  # nothing already written is lost
    assert set(tmp_path.iterdir()) == {src, dst}  # no temporary file left behind


def test_non_utf8_line(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_bytes(json.dumps({"feedback": "a", "response": "b"}).encode() + b"\n\xff\xfe{}\n")
    assert f"{src}:2: not valid UTF-8" in one_line_error(run("--input", str(src)))


def test_skip_invalid_reports_count(tmp_path):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_rows(src, [{"feedback": FEEDBACK, "response": GENUINE}, "{oops", {"feedback": 1, "response": "x"}])
    result = run("--input", str(src), "--output", str(dst), "--skip-invalid", "--json")
    assert result.exit_code == 0
    assert json.loads(result.output.splitlines()[0])["skipped"] == 2
    assert len(dst.read_text().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    ([], "give both --feedback and --response"),
    (["--feedback", "x"], "give both --feedback and --response"),
    (["--feedback", "x", "--response", "y", "--input", "f.jsonl"], "not both"),
    (["--feedback", "x", "--response", "y", "--skip-invalid"], "only apply with --input"),
    (["--input", "/nonexistent/in.jsonl"], "cannot read"),
    (["--feedback", "x", "--response", "y", "--config", "/nonexistent.yaml"], "cannot read"),
])
def test_usage_errors(args, message):
    assert message in one_line_error(run(*args))


def test_invalid_config_names_the_field(tmp_path):
    cfg = tmp_path / "r.yaml"
    cfg.write_text("weights: {length: 1.0}\n")
    line = one_line_error(run("--feedback", "x", "--response", "y", "--config", str(cfg)))
    assert str(cfg) in line and "field" in line


def test_empty_file(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text("\n\n")
    assert "no valid rows" in one_line_error(run("--input", str(src)))
