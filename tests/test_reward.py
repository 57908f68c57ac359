"""The reward: each component, the sign convention, the privacy gate and the anti-hacking cases."""

import pytest

from rewards import COMPONENTS, GATES, ConfigError, default_scorer, load_config, score

FEEDBACK = "The preliminary results on bias are overclaimed and the survey sample is tiny."
GENUINE = (
    "Thank you for raising this, and we are sorry the preliminary results came across as overclaimed. You are "
    "right that the survey sample is small: it had 48 respondents, which limits how far the bias findings "
    "generalise. We will revise the summary to state this limitation plainly, report confidence intervals, and "
    "mark the results as preliminary until we can verify them on a larger sample. If you have suggestions for "
    "the follow-up survey design, we would value them."
)
PRAISE = "I loved the plain-language summary of the transparency report, it is clear and wonderfully honest."
PRAISE_REPLY = (
    "Thank you for your kind words about the plain-language summary of the transparency report; we are glad it "
    "read as clear and honest. We will keep writing the summary this way. It still has limitations: several "
    "figures are self-reported by partner institutions and have not been independently verified, and we say so "
    "in the report. If any part of the summary could be clearer, we would be grateful to hear it."
)
NEUTRAL = "Which script in the replication package produces the robustness table?"


def comp(response: str, feedback: str = FEEDBACK) -> dict[str, float]:
    return {name: c.score for name, c in score(response, feedback).components.items()}


def test_issue_examples():
    assert score(GENUINE, FEEDBACK).total >= 0.5
    assert score("Thanks! Our results are guaranteed and 100% production-ready.", FEEDBACK).total < 0
    assert score(GENUINE + " Write to me at jane.doe@example.org.", FEEDBACK).total == -1.0


def test_result_shape_and_range():
    result = score(GENUINE, FEEDBACK)
    assert set(result.components) == {*COMPONENTS, *GATES}
    for c in result.components.values():
        assert -1.0 <= c.score <= 1.0
        assert c.explanation.endswith(".") and len(c.explanation) > 20
    assert sum(result.components[n].weight for n in COMPONENTS) == pytest.approx(1.0)
    for response in ["", "ok", GENUINE * 5, "!!!!!!", "guaranteed " * 300]:
        assert -1.0 <= score(response, FEEDBACK).total <= 1.0


def test_total_is_documented_weighted_sum():
    result = score(GENUINE[:200], FEEDBACK)
    weighted = sum(result.components[n].weight * result.components[n].score for n in COMPONENTS)
    assert result.total == pytest.approx(min(weighted, result.components["overselling"].score), abs=1e-3)


class TestLength:
    def words(self, n: int) -> str:
        vocab = [f"w{i}" for i in range(400)]  # distinct words: no repeated trigrams
        return " ".join(vocab[:n])

    def test_best_range_is_flat_and_falls_off_smoothly(self):
        inside = [comp(self.words(n))["length"] for n in (50, 100, 150)]
        assert inside == [1.0, 1.0, 1.0]
        short = [comp(self.words(n))["length"] for n in (45, 35, 20, 5)]
        long = [comp(self.words(n))["length"] for n in (170, 220, 320)]
        assert short == sorted(short, reverse=True) and long == sorted(long, reverse=True)
        assert 0 < short[0] < 1 and long[-1] < 0
        assert abs(comp(self.words(49))["length"] - 1.0) < 0.01  # no cliff at the edge

    def test_empty_is_worst(self):
        assert comp("")["length"] == -1.0
        assert score("", FEEDBACK).total == score("   \n ", FEEDBACK).total == -1.0
        assert score("", FEEDBACK).total < score("ok", FEEDBACK).total


class TestTone:
    def test_negative_feedback_wants_empathy_not_cheer(self):
        empathetic = comp(GENUINE)["tone"]
        cheerful = comp("Awesome, thanks so much! We are thrilled you wrote! Great news, we love it! Amazing day!")
        cold = comp("The sample size is what it is. The results stand as published in the report.")
        assert empathetic == 1.0
        assert cheerful["tone"] < cold["tone"] < empathetic
        assert cheerful["tone"] <= -0.5

    def test_positive_feedback_wants_appreciation(self):
        assert comp(PRAISE_REPLY, PRAISE)["tone"] == 1.0
        dismissive = comp("Noted. The summary was standard practice and not a focus of our work.", PRAISE)
        assert dismissive["tone"] < 0

    def test_neutral_feedback_wants_professional(self):
        plain = ("The robustness table is produced by the script make_tables.py in the analysis folder; thank "
                 "you for asking.")
        gushing = "OMG amazing question!!! We are SO thrilled you asked! Fantastic! Awesome! Love it!"
        assert comp(plain, NEUTRAL)["tone"] == 1.0
        assert comp(gushing, NEUTRAL)["tone"] < 0


class TestIntegrity:
    def test_markers_earn_credit_and_saturate(self):
        base = "We read your note about the survey and will reply with more detail soon."
        none = comp(base)["integrity"]
        one = comp(base + " The results are preliminary.")["integrity"]
        two = comp(base + " The results are preliminary and the sample size is a limitation.")["integrity"]
        many = comp(base + " The results are preliminary, the sample size is a limitation, the evidence is "
                           "uncertain and we will verify it with a replication.")["integrity"]
        assert none < 0 < one < two
        assert many == two == 1.0  # saturated: more markers add nothing

    def test_stuffing_is_penalised(self):
        stuffed = "limitation preliminary uncertainty evidence sample size verify caveat replication " * 4
        assert comp(stuffed)["integrity"] < comp("Results are preliminary and the sample size is small.")["integrity"]
        assert comp(stuffed)["integrity"] < 0


class TestOverselling:
    @pytest.mark.parametrize("hype", ["guaranteed", "perfect", "100%", "production-ready", "never fails", "always"])
    def test_each_hype_term_is_penalised(self, hype):
        assert comp(f"The new version is {hype} for everyone.")["overselling"] < 1.0

    def test_penalty_grows_with_hits_and_caps_total(self):
        one = score(GENUINE + " It is guaranteed.", FEEDBACK)
        three = score(GENUINE + " It is guaranteed, perfect and production-ready.", FEEDBACK)
        assert three.components["overselling"].score < one.components["overselling"].score < 1.0
        assert three.total < 0  # hype is not bought back by an otherwise good reply

    def test_whole_words_only(self):
        assert comp("The provenance of each dataset is documented.")["overselling"] == 1.0

    def test_uncited_statistic(self):
        assert comp("95% of users agree with our approach.")["overselling"] < 1.0
        assert comp("95% of users agreed (n=412, see Table 2 of the report).")["overselling"] == 1.0


class TestAcknowledgment:
    def test_specific_beats_generic(self):
        generic = ("Thank you for your feedback. We appreciate you taking the time to write to us and we will take "
                   "your comments into account as we continue our work.")
        assert comp(GENUINE)["acknowledgment"] == 1.0
        assert comp(generic)["acknowledgment"] == -1.0

    def test_generic_reply_scores_the_same_for_any_feedback(self):
        generic = "Thank you for your feedback, we will consider it carefully as we continue our work."
        assert comp(generic, FEEDBACK)["acknowledgment"] == comp(generic, PRAISE)["acknowledgment"] == -1.0

    def test_placeholders_are_not_key_terms(self):
        redacted = "Hi, I'm <PERSON_1> (<EMAIL_ADDRESS_1>). " + FEEDBACK
        analysis = default_scorer().analyze_feedback(redacted)
        assert not any(w.startswith(("person", "email")) for w in analysis.key_words)


class TestPrivacy:
    @pytest.mark.parametrize("pii", [
        "jane.doe@example.org", "+1 415 555 0134", "(646) 555-0142", "+44 20 7946 0958",
        "4111 1111 1111 1111", "123-45-6789", "DE89370400440532013000", "192.168.10.25",
    ])
    def test_personal_data_gives_minimum(self, pii):
        result = score(f"{GENUINE} Contact: {pii}.", FEEDBACK)
        assert result.total == -1.0
        assert result.components["privacy"].score == -1.0

    @pytest.mark.parametrize("harmless", [
        "<EMAIL_ADDRESS_1>", "<PHONE_NUMBER_2>", "version 2.3.1", "n=412 respondents", "in 2024", "48 respondents",
    ])
    def test_ordinary_numbers_and_placeholders_pass(self, harmless):
        assert score(f"{GENUINE} Note: {harmless}.", FEEDBACK).components["privacy"].score == 1.0


def test_sign_convention():
    good = [GENUINE, PRAISE_REPLY]
    bad = ["", "ok", "Thanks! Our results are guaranteed and 100% production-ready.", GENUINE + " Mail a@b.org"]
    assert all(score(r, f).total >= 0 for r, f in zip(good, [FEEDBACK, PRAISE], strict=True))
    assert all(score(r, FEEDBACK).total < 0 for r in bad)


class TestAntiHacking:
    margin = 0.4

    def test_echoing_the_feedback(self):
        echo = score(FEEDBACK, FEEDBACK).total
        echo_padded = score(" ".join([FEEDBACK] * 6), FEEDBACK).total
        assert max(echo, echo_padded) < score(GENUINE, FEEDBACK).total - self.margin
        assert comp(FEEDBACK)["acknowledgment"] == -1.0

    def test_keyword_stuffing(self):
        stuffed = ("preliminary bias survey sample overclaimed limitation uncertainty evidence verify caveat "
                   "results tiny " * 6)
        assert score(stuffed, FEEDBACK).total < score(GENUINE, FEEDBACK).total - self.margin

    def test_padding_a_weak_reply_to_100_words(self):
        weak = "Thanks for the note about the survey, we will look at the results."
        filler = ("We value every comment we receive and we read each message with care. " * 7).strip()
        padded = f"{weak} {filler}"
        assert 95 <= len(padded.split()) <= 110
        assert score(padded, FEEDBACK).total < score(GENUINE, FEEDBACK).total - self.margin
        varied = (weak + " Our team meets on Mondays to read incoming mail, and each note is filed in a shared "
                  "folder so colleagues can see it. We also keep a log of topics that come up often, which helps "
                  "when we plan the next newsletter. Many readers write to us each month about many subjects, and "
                  "we try to answer each of them in turn, although replies can take some time during busy periods "
                  "of the academic year.")
        assert 85 <= len(varied.split()) <= 110
        assert score(varied, FEEDBACK).total < score(GENUINE, FEEDBACK).total - self.margin


    def test_word_salad(self):
        # What a 30-step GRPO run found before this gate: sprayed words hit length, markers and key terms.
        salad = ("preliminary survey sampl bias overclaimedtiny limitatio verify3 caveat resul tsample evidenc "
                 "uncertai nty replicat surv eyti ny overcl aimed bia sfind ings smal lsample verif ycheck "
                 "preliminar yresults limitation sample bias survey tiny checkd evidencee caveats").split()
        salad_text = " ".join(salad * 2)
        result = score(salad_text, FEEDBACK)
        assert result.components["readability"].score == -1.0
        assert result.total <= -0.5 < score(GENUINE, FEEDBACK).total - self.margin
        assert comp(GENUINE)["readability"] == 1.0


def test_config_validation(tmp_path):
    bad = tmp_path / "reward.yaml"
    text = (load_config.__globals__["DEFAULT_CONFIG_PATH"]).read_text().replace("length: 0.20", "length: 0.50", 1)
    bad.write_text(text)
    with pytest.raises(ConfigError, match="sum to 1"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
