"""The feedback dataset, its generator and the loader."""

import collections
import importlib.util
import json

import datasets
import pytest

from data import DATA_DIR, SPLITS, DatasetError, load_feedback, load_lessons
from rewards import default_scorer


def _generator():
    spec = importlib.util.spec_from_file_location("generate", DATA_DIR / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def tasks() -> list[dict]:
    return [json.loads(line) for s in SPLITS for line in (DATA_DIR / f"feedback_{s}.jsonl").read_text().splitlines()]


def test_committed_files_are_the_generators_output(tasks):
    generate = _generator()
    assert generate.generate(seed=7, per_category=45) == sorted(tasks, key=lambda t: t["id"])
    assert generate.generate(seed=8, per_category=45) != generate.generate(seed=7, per_category=45)


def test_size_categories_and_actions(tasks):
    assert len(tasks) >= 300
    assert len({t["id"] for t in tasks}) == len(tasks)
    assert len({t["feedback"] for t in tasks}) == len(tasks)
    expected = {"bug_report": "answer", "research_critique": "answer", "feature_request": "answer",
                "praise": "answer", "confusion": "answer", "complaint": "answer", "spam": "reject",
                "hostile": "reject", "legal_threat": "escalate", "self_harm": "escalate"}
    assert {t["category"] for t in tasks} == set(expected)
    assert all(t["expected_action"] == expected[t["category"]] for t in tasks)
    words = [len(t["feedback"].split()) for t in tasks]
    assert min(words) < 15 and max(words) > 45  # varied length


def test_splits_are_fixed_stratified_and_disjoint(tasks):
    counts = collections.Counter(t["split"] for t in tasks)
    assert counts["train"] > counts["val"] > 0 and counts["test"] > 0
    for category in {t["category"] for t in tasks}:
        in_val = [t for t in tasks if t["category"] == category and t["split"] == "val"]
        assert in_val, f"no {category} task in val"


def test_personal_data_is_injected_and_recorded(tasks):
    with_pii = [t for t in tasks if t["pii"]]
    assert len(with_pii) / len(tasks) > 0.3
    kinds = collections.Counter(p["type"] for t in with_pii for p in t["pii"])
    assert {"PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "LOCATION"} <= set(kinds)
    assert all(p["value"] in t["feedback"] for t in with_pii for p in t["pii"])
    # Reference replies never carry the personal data they could not have seen.
    assert not any(p["value"] in r["text"] for t in with_pii for p in t["pii"] for r in t["references"]
                   if p["type"] != "LOCATION")


def test_references_are_mixed_quality_and_the_reward_agrees(tasks):
    scorer = default_scorer()
    margins = []
    for t in tasks:
        qualities = [r["quality"] for r in t["references"]]
        assert qualities == ["good", "too_short", "oversold", "generic", "off_tone"]
        if t["expected_action"] == "answer":
            good, *flawed = (scorer(r["text"], t["feedback"]).total for r in t["references"])
            margins.append(good - max(flawed))
            assert good >= 0.5, t["id"]
    assert min(margins) > 0.1  # the good reply beats every flawed one on every answerable task


def test_seed_lessons():
    lessons = load_lessons()
    assert len(lessons) >= 20
    assert len({lesson.id for lesson in lessons}) == len(lessons)
    helpful = sum(lesson.helpful for lesson in lessons)
    assert helpful >= 8 and len(lessons) - helpful >= 8


class TestLoader:
    def test_splits(self):
        val = load_feedback("val")
        assert isinstance(val, datasets.Dataset)
        assert len(val) == len((DATA_DIR / "feedback_val.jsonl").read_text().splitlines())
        assert {"id", "feedback", "category", "expected_action", "references", "pii"} <= set(val.column_names)

    def test_user_jsonl_with_only_feedback(self, tmp_path):
        path = tmp_path / "mine.jsonl"
        rows = [json.dumps({"feedback": "Great report."}), "", json.dumps({"feedback": "Why?", "id": "q"})]
        path.write_text("\n".join(rows))
        ds = load_feedback(path)
        assert ds["id"] == ["mine-1", "q"] and ds["references"] == [[], []]

    def test_csv(self, tmp_path):
        path = tmp_path / "mine.csv"
        path.write_text('id,feedback,category\na,"Nice, clear work.",praise\nb,Is the sample size 40?,\n')
        ds = load_feedback(path)
        assert ds["feedback"] == ["Nice, clear work.", "Is the sample size 40?"] and ds["category"] == ["praise", None]

    def test_saved_hf_dataset(self, tmp_path):
        datasets.Dataset.from_list([{"feedback": "a"}, {"feedback": "b"}]).save_to_disk(tmp_path / "saved")
        assert load_feedback(tmp_path / "saved")["feedback"] == ["a", "b"]

    @pytest.mark.parametrize("content, where, what", [
        (b'{"feedback": "ok"}\n{"feedbak": "typo"}\n', ":2:", "field 'feedback'"),
        (b'{"feedback": "ok"}\n{"feedback": ""}\n', ":2:", "field 'feedback'"),
        (b'{"feedback": "ok", "expected_action": "maybe"}\n', ":1:", "field 'expected_action'"),
        (b'{"feedback": "ok"}\n{"feedback": "ok"\n', ":2:", "not valid JSON"),
        (b'{"feedback": "ok"}\n\xff\n', ":2:", "not valid UTF-8"),
        (b'["feedback"]\n', ":1:", "expected a JSON object"),
        (b"\n", "", "no rows"),
    ])
    def test_bad_jsonl_names_file_and_line(self, tmp_path, content, where, what):
        path = tmp_path / "bad.jsonl"
        path.write_bytes(content)
        with pytest.raises(DatasetError) as e:
            load_feedback(path)
        assert str(e.value).startswith(f"{path}{where}") and what in str(e.value)

    def test_bad_csv_names_line(self, tmp_path):
        path = tmp_path / "bad.csv"
        path.write_text("feedback,expected_action\nfine,answer\n\"multi\nline\",maybe\n")
        with pytest.raises(DatasetError, match=r"bad\.csv:4: field 'expected_action'"):
            load_feedback(path)
        path.write_text("text\nhello\n")
        with pytest.raises(DatasetError, match="no 'feedback' column"):
            load_feedback(path)

    def test_missing_and_unsupported(self, tmp_path):
        with pytest.raises(DatasetError, match="no such file"):
            load_feedback(tmp_path / "nope.jsonl")
        (tmp_path / "x.parquet").write_text("")
        with pytest.raises(DatasetError, match="unsupported format"):
            load_feedback(tmp_path / "x.parquet")
