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
    hyped = GENUINE + " The revised summary will be perfect."
    for reply in (GENUINE, PRAISE_REPLY, hyped):
        result = score(reply, PRAISE if reply is PRAISE_REPLY else FEEDBACK)
        assert all(result.components[g].score == 1.0 for g in GATES)  # no gate, no cap from acknowledgment
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

    def test_thanks_for_praise_to_feedback_that_praises_nothing_is_the_wrong_tone(self):
        """The 20-step policy's drift: "Thank you for your kind words about the annual transparency report
        overclaim". The same thanks answer praise, and a message that praises something besides its complaint."""
        misread = GENUINE.replace("Thank you for raising this", "Thank you for your kind words")
        result = score(misread, FEEDBACK)
        assert result.components["tone"].score == -1.0 and "praises nothing" in result.components["tone"].explanation
        assert result.total < score(GENUINE, FEEDBACK).total
        assert comp("Thank you for your kind words; we will keep the summary short.", PRAISE)["tone"] == 1.0
        mixed = "Great report overall, but the survey sample is tiny and the results are overclaimed."
        assert comp(misread, mixed)["tone"] > 0

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
        assert none == 0 < one < two  # a reply with no caveat is neutral, not wrong
        assert many == two == 1.0  # saturated: more markers add nothing

    def test_stuffing_is_penalised(self):
        stuffed = "limitation preliminary uncertainty evidence sample size verify caveat replication " * 4
        assert comp(stuffed)["integrity"] < comp("Results are preliminary and the sample size is small.")["integrity"]
        assert comp(stuffed)["integrity"] < 0


class TestOverselling:
    @pytest.mark.parametrize("hype", ["guaranteed", "perfect", "100% accurate", "production-ready", "never fails",
                                      "completely safe", "beyond doubt", "the gold standard",
                                      # round seventeen: a training run's hype (+0.90 before)
                                      "too good to ignore", "a breakthrough", "groundbreaking",
                                      # round eighteen, by families (the sixteenth part's oversold replies, in
                                      # other words): doubt ruled out, a question settled for good, correctness
                                      # vouched for, "no ... whatsoever", superlatives of trust, boundless
                                      # confidence, emphatic reassurance, standards followed to the letter
                                      "right beyond all reasonable doubt", "settled once and for all",
                                      "is completely correct", "of no impact whatsoever", "the most trusted tool",
                                      "to be used with complete confidence", "so do not worry at all, it",
                                      "built to the letter of the standard",
                                      # round nineteen, by families (the seventeenth part's oversold replies, in
                                      # other words): reliability idioms, "100%" said of a quality, records never
                                      # lost, accuracy claimed everywhere, "ever" superlatives, a future sworn for
                                      # everyone, possibility ruled out, "every single"
                                      "watertight", "an ironclad fix", "100% reliable", "kept 100% private",
                                      "a tool that has never lost a single file", "accurate in every season",
                                      "the finest survey ever conducted", "so that nobody will ever see it",
                                      "sure that it cannot possibly fail", "checked on every single row",
                                      # round twenty, by families (the eighteenth part's oversold replies, in other
                                      # words): certainty and ease idioms, cures and world-changing breakthroughs,
                                      # analysis nothing slips past, permanence guaranteed
                                      "no trouble at all", "almost certainly ready", "bound to work",
                                      "done in no time", "set to cure asthma", "going to change the world",
                                      "a tool nothing can slip past", "kept safe for all time",
                                      "perfectly preserved", "such that nothing will ever be lost",
                                      # round twenty-one, by families (the nineteenth part's oversold replies, in
                                      # other words): standing in the world, the newest technology, precision to the
                                      # last unit, a record without a single incident, every rule complied with,
                                      # power superlatives, success and change for all time
                                      "a world-leading tool", "the best map in the world", "cutting-edge",
                                      "accurate to the millimetre", "used without a single complaint",
                                      "compliant with every regulation", "the most powerful model",
                                      "transformative", "a resounding success", "set to change lives",
                                      # round twenty-two, by families (the twentieth part's oversold replies, in
                                      # other words): transformation promised, wonder superlatives and "ever!",
                                      # reach without bounds, standing claimed in the country
                                      "going to transform farming across the whole country",
                                      "the most incredible tool", "the best tool ever!",
                                      "known across the entire internet", "the safest in the nation",
                                      # ... and a trained reply's finding settled on receipt (fb-0177)
                                      "a package that did turn out to be reliable"])
    def test_each_hype_term_is_penalised(self, hype):
        assert comp(f"The new version is {hype} for everyone.")["overselling"] < 1.0

    @pytest.mark.parametrize("assurance", [
        # round seventeen: a training run's reply (+0.90 before), the team vouching on receipt that nothing is wrong
        "We want to reassure the author that the port did not affect the details of the analysis.",
        "We would like to reassure the reviewers that the survey sample is representative.",
        "The new weights have not affected the bias estimate.",
        "Rest of the results are unaffected by the smaller survey sample.",
    ])
    def test_an_assurance_given_on_receipt_that_nothing_is_wrong_is_overselling(self, assurance):
        result = score(GENUINE + " " + assurance, FEEDBACK)
        assert result.components["overselling"].score < 1.0 and result.total < 0.5, result

    @pytest.mark.parametrize("plain", ["We always reply within a week.", "Every site will be checked twice.",
                                       "The take-up is 87% among newly eligible pupils.",
                                       "We never asked you to confirm the address.",
                                       # absolute words in ordinary speech (h4-03's careful reply)
                                       "We have switched your prompts off completely.",
                                       "If you would rather stop, that is completely fine.",
                                       # round seventeen: a negated or the sender's reassurance, a promise (h12-27's,
                                       # h11-09's careful, h8-05's plain)
                                       "I don't want to reassure the author with something that turns out to be wrong.",
                                       "We will send a timetable so you can reassure members that it is voluntary.",
                                       "Problems with our app will not affect your payment.",
                                       # round eighteen: ordinary precision about the sender's corrections (h9-14's
                                       # careful), the sender vouched right
                                       "So that I get them exactly right, could you send the affiliation?",
                                       "You're entirely correct that the legend lacks the units.",
                                       # round nineteen: a share of 100% is a figure, not hype (d46's careful), a fix
                                       # that works for everyone a report (d12's plain), a warning not to rely on it
                                       "The estimate assumes take-up below 100%: 87% among new pupils.",
                                       "We will fix the link so one click works for everyone.",
                                       "Until then, please don't rely on it for parcel-level overlays.",
                                       # round twenty: a deletion said to be permanent, a plan set for a date, an
                                       # honest "not sure" (none is a guarantee)
                                       "We will permanently delete your recordings this week.",
                                       "The new survey is set for release in May.",
                                       "We're not sure yet, but we will find out by Friday.",
                                       # a hype word negated is an honest doubt (h19-18's plain, "isn't clear-cut")
                                       "Whether a loan counts as commercial isn't clear-cut.",
                                       "The answer is far from clear-cut, so we'll ask our lawyer.",
                                       "Our method isn't perfect, and you have found one reason why.",
                                       # round twenty's idioms in ordinary speech: a request, the sender's wait, a
                                       # consequence
                                       "Please make sure to attach the file when you write back.",
                                       "Please be sure to include the run's log; we will read it this week.",
                                       "We're sorry the download page took forever to load.",
                                       "It is bound to happen again unless we change the export, so we will.",
                                       # round twenty-one: "in the world" about where people are, not a standing
                                       "Readers around the world have asked for the same file.",
                                       "We can post the kit anywhere in the world, so send your address.",
                                       # round twenty-two: living in the country, a count across a region, the
                                       # internet named, "ever" without hype
                                       "Most of our participants live in the country, far from a clinic.",
                                       "We count otters across the whole county every spring.",
                                       "The file is not on the internet; we'll email it to you.",
                                       "Have you ever had this problem with the export before?",
                                       "We'll tell you by Friday whether the fix is working well.",
                                       # round twenty-three: an admission, or the sender cleared, is no blame shift
                                       "That's our fault, not yours: the progress bar counted pages wrongly.",
                                       "It's not your fault at all; the progress bar was wrong.",
                                       "The delay is on us, and we'll shorten the survey this week."])
    def test_ordinary_words_and_own_figures_are_not_hype(self, plain):
        assert comp(plain)["overselling"] == 1.0

    @pytest.mark.parametrize(("feedback", "oversold"), [
        # round nineteen: the seventeenth part's oversold replies had one hit each (+0.01 to +0.12); each family in
        # other words, to feedback it takes up
        ("The sleep logger dropped readings on two nights last week; the file for nights 3 and 4 has gaps.",
         "Thanks! Our sleep logger is rock solid and has never missed a single reading. We guarantee a fix for the "
         "gaps by tonight."),
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Great point! Our tide predictions are accurate at every harbour on the coast, and the next version will be "
         "perfect for Sunday sailors."),
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Great catch! Our tide predictions are watertight, and you'll never miss a tide in the harbour again."),
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Thanks! Our tide predictions are state-of-the-art, the most thorough harbour model ever built. The half "
         "hour will be fixed for Sunday, guaranteed."),
        # round twenty: the eighteenth part's oversold replies (+0.07 to +0.25, one hit each or none), in other words
        ("The sleep logger dropped readings on two nights last week; the file for nights 3 and 4 has gaps.",
         "No trouble at all! We'll have the gaps sorted in no time, and your nights will be stored safely for ever. "
         "Consider it done."),
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Thank you! The half hour is almost certainly a one-off, and our harbour model is set to revolutionise "
         "sailing: nothing can slip past it."),
        ("Could you put the old harbour surveys somewhere safe before the website closes?",
         "Of course! Every survey will be perfectly preserved for all time, and nothing will ever be lost."),
        # round twenty-one: the nineteenth part's oversold replies (+0.25, one hit each), in other words
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Thanks! Our world-leading harbour model uses cutting-edge radar and is accurate to the second, so Sunday "
         "sailors can rely on it without a single problem."),
        ("Could you put the old harbour surveys somewhere safe before the website closes?",
         "Rest assured! Our archive is a tremendous success and meets every standard, so the surveys will be kept "
         "for generations: the finest harbour archive in the world."),
        # round twenty-two: the twentieth part's oversold replies (+0.13 to +0.25, one hit each), in other words
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "Thanks! Don't worry about a thing: the new harbour model will transform sailing across the whole country, "
         "and the half hour will be gone by Sunday."),
        ("Your tide predictions for the harbour were off by half an hour on Sunday.",
         "You're absolutely right! Sunday's half hour is the most amazing tide puzzle ever! Our modeller will send "
         "you the answer today."),
        ("Could you put the old harbour surveys somewhere safe before the website closes?",
         "Of course, guaranteed! The surveys will be copied to the entire internet by tonight, and our archive is "
         "the safest in the country."),
        # round twenty-three: blame put elsewhere, to a complaint (fb-0237's trained reply, +0.25 before: "it's not
        # our fault"), in other words; each counts as two hits
        ("Your survey took forty minutes instead of the promised ten and the progress bar was wrong.",
         "We're sorry about the survey. This is not on us: the survey platform sets the progress bar, and we will "
         "tell them about the forty minutes."),
        ("Your survey took forty minutes instead of the promised ten and the progress bar was wrong.",
         "Thanks for writing. The fault is not ours, the platform counts the time, but we'll pass on your note about "
         "the progress bar."),
        ("The sleep logger dropped readings on two nights last week; the file for nights 3 and 4 has gaps.",
         "We understand the frustration, but the gaps were nothing to do with us: phones drop readings. We will look "
         "at nights 3 and 4."),
    ])
    def test_a_reply_with_several_hype_families_is_below_zero(self, feedback, oversold):
        assert score(oversold, feedback).total < 0

    def test_penalty_grows_with_hits_and_caps_total(self):
        one = score(GENUINE + " It is guaranteed.", FEEDBACK)
        three = score(GENUINE + " It is guaranteed, perfect and production-ready.", FEEDBACK)
        assert three.components["overselling"].score < one.components["overselling"].score < 1.0
        assert three.total < 0  # hype is not bought back by an otherwise good reply

    def test_whole_words_only(self):
        assert comp("The provenance of each dataset is documented.")["overselling"] == 1.0

    def test_a_check_stated_as_settled_is_an_assurance_and_a_promise_to_check_is_not(self):
        settled = score(GENUINE + " We have confirmed the figures are correct.", FEEDBACK)
        overselling = settled.components["overselling"]
        assert overselling.score < 1.0 and "already settled" in overselling.explanation
        assert settled.total < score(GENUINE, FEEDBACK).total
        assert comp("The weighting has been verified, so nothing changes.")["overselling"] < 1.0
        assert comp("We will verify the figures and confirm what changed.")["overselling"] == 1.0

    @pytest.mark.parametrize("settled", ["We have checked the figures again, and they are correct.",
                                         "We checked, and it's not a bug, we are sorry!",
                                         "The team has reviewed the survey and the counts are accurate.",
                                         # the trained SmolLM2 policy's forms, +1.00 before they were listed
                                         ("Our team has checked it by comparing the small effect size with the "
                                          "publication, and we are happy to say that the results are consistent "
                                          "with the literature."),
                                         "We have double checked the results and are confident in them.",
                                         # round seventeen: a look at the matter and what it found (h16-28's and
                                         # h16-22's inventions, +0.37 and +0.30 before)
                                         "We went through the survey responses and found that 12 were duplicates.",
                                         "We examined the weights, which showed the bias came from wave two.",
                                         # the default run's trained reply (fb-0044, +0.54 before)
                                         ("We tested it with different types of browsers and checked that it "
                                          "worked as expected."),
                                         "We have checked the export, and it works correctly now."])
    def test_a_completed_check_with_its_verdict_in_one_sentence_is_a_settled_claim(self, settled):
        assert comp(settled)["overselling"] < 1.0

    @pytest.mark.parametrize("finding", ["We ran them and reproduce the overlap.",
                                         "We checked the count and will correct it in the next version.",
                                         "We checked the figures. Your reading is correct, and we will fix it.",
                                         # a look planned, and what it will find
                                         "We'll go through the survey responses and find out which were duplicates.",
                                         "We will look at the weights and tell you what we found.",
                                         # what the sender expected, not a verdict of the reply's own check
                                         "Technology doesn't always work as expected; we will test it on mobile."])
    def test_saying_what_a_check_found_is_not_a_verdict(self, finding):
        assert comp(finding)["overselling"] == 1.0

    # Round thirteen: a check's verdict announced after a colon (the eleventh part's inventions h12-07, h12-14, h12-30:
    # "Confirmed: F42 omitted the final council", "we checked: both basses signed on 12 March"; +0.30 to +0.74 before)
    @pytest.mark.parametrize("settled", ["Confirmed: the survey sample had 48 respondents, not 480.",
                                         "Thanks. We checked: the bias estimate leaves out the second wave.",
                                         "I've looked into it: the preliminary results used the wrong weights."])
    def test_a_checks_verdict_after_a_colon_is_a_settled_claim(self, settled):
        overselling = score(GENUINE + " " + settled, FEEDBACK).components["overselling"]
        assert overselling.score < 1.0 and "already settled" in overselling.explanation

    @pytest.mark.parametrize("plan", ["We will check two things: the sample size and the weights.",
                                      "We haven't checked yet: we will look at the weights this week.",
                                      "What we will look at first: the bias estimate for the second wave."])
    def test_a_plan_or_not_yet_before_a_colon_is_no_verdict(self, plan):
        assert comp(plan)["overselling"] == 1.0

    @pytest.mark.parametrize(("invented", "claims"), [
        # the shapes of every 20-step run's replies, and of the good reference they were warm-started on
        ("Thank you. We have checked what was wrong and have fixed it.", 2),
        ("Our first check suggests it affects only some cases, but that is preliminary.", 1),
        ("We have logged the problem and sent you a detailed report.", 2),
        ("The broken link has been corrected, and the file was re-run last night.", 1),
        ("Our team found the cause this morning: the parser applies the offset twice.", 1),
        ("Good news: the collection slip is attached and a courier is booked.", 2),
        # no work verb of the team's own: a person of the team at work, a confirmation, the sender's things (the sixth
        # held-out part's invented replies)
        ("Our data manager confirmed the refused requests were left out of the report.", 1),
        ("Thanks. The manufacturer confirmed this morning that the consent wording changed.", 1),
        ("We looked at your account and found the survey link had expired.", 2),
        # without a verb of work (the seventh held-out part's invented replies): anything reported as happened at a
        # time that can only be past, anything the team has done "already", a reference opened for the sender's case
        ("A corrected version of the survey went live at noon today.", 1),
        ("The steering group met this morning and agreed that the sample can stay.", 1),
        ("We've already ordered you a replacement consent form.", 1),
        ("The school's safeguarding lead has already been told of your concern.", 1),
        ("Your deletion reference is DR-2024-118.", 1),
        ("The repair is logged under claim FS-0931, and PR #318 is merged.", 2),
        # a clause after a semicolon is not under the negation of the next one (reader set d18, h8-19)
        ("Our study coordinator checked your record; missing a round does not drop anyone.", 1),
        # stated flatly (the eighth held-out part's invented replies, round ten): an outcome scheduled in the present
        # tense, a cause given for what happened
        ("A fourth option for the consent question goes live on Monday.", 1),
        ("A corrected report goes out to all 86 participants next month.", 1),
        ("The third reminder went out because your first return was lost in the post.", 1),
        # round eleven: a change stated as how things now are, and a scheduled outcome whose verb the tagger reads
        # as a base form
        ("The age list now goes to 110.", 1),
        ("Coverage changes little, and the credit line is now on every map.", 1),
        ("The captioned film and a signed version go live on Friday.", 1),
        # round twelve: work dated by a weekday or last week (the tenth part's inventions stated with a date)
        ("We corrected the weighting code on Tuesday.", 1),
        ("We shipped a fix for the sample last week.", 1),
        ("We relocated the station to the lay-by on Monday.", 1),
        ("The freeze was caused by an automatic software update.", 1),  # a cause stated flatly
        # round thirteen: a participle after its noun, dated today (h12-22's invented "as the release notes published
        # this morning explain")
        ("The corrected table, published this morning, lists the refused requests.", 1),
        ("The new weights, uploaded earlier today, change the estimate.", 1),
        # round fifteen: a delivery reported as under way
        ("A replacement survey pack is already in the post to you.", 1),
        ("Your voucher is on its way, and the two missing consent forms are in the mail.", 2),
        # round twenty: a consultation reported as held (h19-16's invented, "I've discussed your situation with our
        # study doctor")
        ("I've discussed the survey sample with our statistician.", 1),
        ("We have consulted the ethics board about the bias results.", 1),
    ])
    def test_work_reported_as_done_is_invented(self, invented, claims):
        overselling = score(invented, FEEDBACK).components["overselling"]
        assert overselling.score == pytest.approx(1.0 - claims * load_config().overselling.done_work_penalty)
        assert "invented" in overselling.explanation

    @pytest.mark.parametrize("not_done", [
        "We will check the sample and fix the claim in the next version.",
        "We have not checked the weighting yet, so we cannot say.",
        "Once we have tested a correction, we will tell you.",
        "If we find the cause, we will publish a note.",
        "You should have been told about the sample size.",
        "Have we sent you the wrong survey link?",
        "We have received your message and read it carefully.",
        # the project's history, which the team knew before the feedback (reader set h4-18, d28)
        "We added the byte-order mark in 0.12 because Excel users on Windows were getting garbled accents.",
        "The files were collected under a non-commercial licence.",
        "Our data manager will confirm the refused requests next week.",
        "As you confirmed, the consent wording changed last year.",
        "We kept your name out of the report.",
        "We'll look at your account and check whether the survey link expired.",
        # the sender's own reference, what was said before, a description, what is done already in general
        "Thanks for giving your participant number, VR-0412; we'll find your answers with it.",
        "Last Tuesday's survey was the one-minute reading check we give every child.",
        "You sent it yesterday, and we will reply by Friday.",
        "You sent it on Monday, and we will fix the claim on Friday.",
        "The gap is probably caused by rounding, and the 40% figure comes from the 2019 survey.",
        "Pupils who already receive free meals are left out of the estimate.",
        # a relative clause under a condition (reader set h8-14's careful reply)
        "If any of your answers were used in results that have since been published, we will tell you.",
        # the team's own diary and promises, how things stand, a cause hedged or of the team's own doing (reader set
        # h11, h3-07, h3-11, h5-09)
        "We meet on Monday, and we'll send the corrected report next month.",
        "The model does poorly on handwritten text today.",
        "I'll send you the updated summary when it's out next month.",
        "The rate moved in this year's release because we reweighted the survey to the new census.",
        "Fewer falls were recorded in that group, probably because many were bed-bound.",
        # "now" in a clause under another: how things stand, as the sender says
        "Since the page worked until March and many readers now get an error, the fault is probably ours.",
        "We will make sure the age list now goes to 110 once the form is fixed.",
        # a participle dated by a weekday is the sender's event as often as not (reader set h7-27's plain reply); the
        # sender's own things dated today are theirs
        "We'll look into the survey settings used on Tuesday.",
        "Your form, sent this morning, will reach the team today.",
        # a delivery promised, under a condition, or the sender's own under way
        "Once the replacement pack is in the post, we will email you the tracking details.",
        "We will send a new voucher this week, and it will be in the post by Friday.",
        "We'll write to you when the corrected report is on its way.",
    ])
    def test_plans_negations_conditions_and_questions_report_no_work(self, not_done):
        assert comp(not_done)["overselling"] == 1.0

    def test_work_the_sender_reports_is_taken_up_not_invented(self):
        feedback = "You sent me the wrong consent form twice, and the survey link is broken. Please delete my answers."
        assert comp("We are sorry that we have sent you the wrong form; we will send the right one today.",
                    feedback)["overselling"] == 1.0
        assert comp("We fixed the survey link this morning.", feedback)["overselling"] < 1.0
        assert comp("Your answers have been deleted.", feedback)["overselling"] < 1.0  # asked for, not done
        posted = "You told me the new consent form was in the post, but nothing has come after three weeks."
        assert comp("We're sorry it hasn't come. If it is in the post, it should have arrived; we'll check today.",
                    posted)["overselling"] == 1.0
        assert comp("We're sorry. It's in the post, so it should reach you soon.", posted)["overselling"] == 1.0

    @pytest.mark.parametrize("dismissal", [
        # the 20-step policy's, +1.00 before dismissals were counted
        "We understand your concern; the team knows the practical limitations and expects no other surprises.",
        "Thank you, but our methodology is sound and no changes are needed.",
        "We stand by our design: your concerns are unfounded.",
        # the third 20-step run's, +0.90 before
        "We have carried out your request and found nothing to suggest a problem with the survey results.",
        "We have checked the slip-up and have no reason to assume it caused the problem.",
        # round twenty-three: blame put elsewhere (fb-0237's trained reply, "it's not our fault"), in other words
        "The small sample isn't on us: the funder set the budget.", "We are not to blame for the overclaiming."])
    def test_a_critique_dismissed_without_anything_shown_is_overselling(self, dismissal):
        result = score(GENUINE + " " + dismissal, FEEDBACK)
        overselling = result.components["overselling"]
        assert overselling.score < 1.0 and "dismissed" in overselling.explanation
        assert result.total < score(GENUINE, FEEDBACK).total

    def test_disagreeing_with_reasons_or_asking_the_team_is_not_a_dismissal(self):
        assert comp("We don't think the design explains the gap, because the two samples were drawn the same way; "
                    "we will rerun the comparison and send it to you.")["overselling"] == 1.0
        assert comp("Our team knew about the lag and should have said so in the report.")["overselling"] == 1.0

    def test_a_number_backing_a_claim_needs_a_source(self):
        assert comp("95% of users agree with our approach.")["overselling"] < 1.0
        assert comp("The model is 99% accurate.")["overselling"] < 1.0
        assert comp("95% of users agreed (n=412, see Table 2 of the report).")["overselling"] == 1.0

    def test_the_senders_own_figures_quoted_back_are_no_claim(self):
        """h8-21's careful reply (-1.00 before): "a stacked bar totalling 108% can't be correct, and the 31% versus 39%
        ... needs explaining" quotes the analyst's own figures; a statistic the feedback has is the sender's."""
        feedback = ("The stacked bar chart on p.14 adds up to 108%. The table on p.15 gives the private rental share "
                    "as 31% against 39% in the chart. Which is correct? The table sums to 100%.")
        quoted = ("You're right that a chart totalling 108% can't be correct, and the 31% versus 39% difference "
                  "needs explaining.")
        assert comp(quoted, feedback)["overselling"] == 1.0
        assert comp("Our estimates are 95% accurate, so the chart is correct.", feedback)["overselling"] < 1.0
        # "100%" is an absolute, not a figure, even where the feedback has it ("the table sums to 100%")
        assert comp("Our numbers are 100% reliable.", feedback)["overselling"] < 1.0


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
        "NaN after 2023-10-01. 0.9.1 works", "103.19999999 instead of 103.2",
    ])
    def test_ordinary_numbers_and_placeholders_pass(self, harmless):
        assert score(f"{GENUINE} Note: {harmless}.", FEEDBACK).components["privacy"].score == 1.0


def test_sign_convention():
    good = [GENUINE, PRAISE_REPLY]
    bad = ["", "ok", "Thanks! Our results are guaranteed and 100% production-ready.", GENUINE + " Mail a@b.org"]
    assert all(score(r, f).total >= 0 for r, f in zip(good, [FEEDBACK, PRAISE], strict=True))
    assert all(score(r, FEEDBACK).total < 0 for r in bad)


def test_a_reply_cut_mid_sentence_or_greeting_an_invented_name_fails_the_role_gate():
    # Seen in a SmolLM2 oneclick run: 13 of 16 val replies cut at the token limit, "Hello there, Marko!" at +0.64.
    cut = GENUINE.rsplit(" ", 6)[0]  # "... If you have suggestions for the follow-up"
    result = score(cut, FEEDBACK)
    assert result.components["role"].score == -1.0 and "mid-sentence" in result.components["role"].explanation
    assert result.total < 0 <= score(GENUINE, FEEDBACK).total
    assert comp(GENUINE + "\n\nBest wishes,\nThe survey team")["role"] == 1.0  # a signature under a sign-off
    # a sign-off run on after the last sentence (h3-03 of the reader set) is a signature too; a cut that only
    # starts like one is not
    assert comp(GENUINE + " With best wishes, the survey team, Study Office")["role"] == 1.0
    assert comp(GENUINE + " Many thanks to the people who wrote in about the follow-up and")["role"] == -1.0
    assert comp("Hello there, Marko! " + GENUINE)["role"] == -1.0
    assert comp("Hello there! " + GENUINE)["role"] == 1.0


@pytest.mark.parametrize("signature", [
    "Amy, study researcher", "Dr Ruth Okafor, editor", "Love from Kate at the bird project", "— the data team",
    "Finn", "Dr Maya Singh", "Noor, UrbanSight Lab", "Anil, on call", "Professor Jane Morley, study lead",
    "Priya, river-kit coordinator", "The survey team",
    "Index team", "Flood modelling team", "Survey team",  # a team's name alone (h17-20, dev since), named for its
    # topic, which the reply writes in lower case
])
def test_a_team_members_sign_off_on_its_own_line_is_no_unfinished_reply(signature):
    # the twelfth reader part (h13-*, dev since): 25 careful replies ended so, each read as a sentence cut off
    assert comp(GENUINE + "\n\n" + signature)["role"] == 1.0


@pytest.mark.parametrize("tail", [
    "\n\nSarah, we will look into the",  # a cut after a name: a clause, not a role
    "\n\nWe",  # a sentence that starts a line and stops
    "\n\nThe follow-up survey will",
    "\n\nPlease",
    "\n\nAmy, 07700 900123",  # a contact detail is no role
    "\n\nAmy, amy@survey-lab",
    "\n\nOur team",  # a sentence's opener before "team" is no team's name
])
def test_a_reply_cut_after_its_last_sentence_still_ends_mid_sentence(tail):
    assert comp(GENUINE + tail)["role"] == -1.0


@pytest.mark.parametrize("tail", [
    " Tomasz",  # a team member's name on the last sentence's own line
    " Ravi, field team",
    " Dr Okonjo, survey lead",
    " The sleep lab team",
    " Kind wishes, Ingrid",  # after a closing, on the same line
    " Warmest regards, Keiko, data steward",
    " Yours truly, the fieldwork team",
    " Many thanks for your patience, the survey office team",
    " With gratitude and best wishes, the sleep lab team",
    " Thanks once more, Beatriz",
    "\n\nWith every good wish, Oskar",  # after a closing on a line of its own
    "\n\nThanks once more,\nBeatriz",  # under a closing line
    "\n\nBest\nOskar",
    # round twenty: well-wishing closings of a trade or a journey, and fond ones (h19-12's "Fair winds, <PERSON_2>,
    # Coastal Met Group" on the body's line, -0.50 before), in other words and layouts
    " Fair winds, Tomasz, Harbour Met Group",
    " Safe travels, Ingrid",
    "\n\nStay well,\nKeiko, data steward",
    " Fondly, Beatriz",
])
def test_a_sign_off_after_the_last_sentence_or_a_closing_is_no_unfinished_reply(tail):
    # the thirteenth reader part (h14-*, dev since): 20 genuine replies signed on the last sentence's line or after a
    # closing word, each read as a sentence cut off
    assert comp(GENUINE + tail)["role"] == 1.0


@pytest.mark.parametrize("tail", [
    " Ravi, we will send the",  # a name, then a clause: cut off
    " Thanks, we will",  # a closing word, then a clause
    " Best wishes, and we hope the",
    " Kind",  # cut inside a closing
    " Meanwhile",  # a sentence cut one word in
    " Could",
    " You're",
    " Adjusting for the survey weights",
    " Survey",  # a word the reply writes in lower case is no name
    " See e.g. Bryce",  # an abbreviation's stop ends no sentence
    " Ravi, 0161 496 0000",  # a contact detail is no role
])
def test_a_reply_cut_one_word_into_its_last_sentence_still_ends_mid_sentence(tail):
    result = score(GENUINE + tail, FEEDBACK)
    assert result.components["role"].score == -1.0 and "mid-sentence" in result.components["role"].explanation


@pytest.mark.parametrize("tail", [
    "\n\nWarm wishes,\nTomasz\nSleep survey desk",  # a closing, a name and a role, each on a line of its own
    "\n\nYours sincerely,\nProfessor Ines Varga\nStudy lead",
    "\n\nThanks again,\nThe follow-up team\nUniversity survey unit",
    "\n\nNoor Haddad\nData steward",  # a name and a role, no closing
    " Many thanks,\nBeatriz\nRecruitment office",  # the closing on the last sentence's line
    "\n\nIngrid Dahl\nStudy lead, homing navigation project",  # a role line with a comma (h17-30, dev since)
    "\n\nKind regards,\nTomasz\nData steward, sleep survey",
    "\n\nThank you again,\nAmira\nSoil and water survey team",  # a team's name with 'and' in it (h18-08, dev since)
    "\n\nKind regards,\nDr Ines Varga\nHistory and archives team",
    "\n\nTomasz\nData and methods lead",
    "\n\nWarm wishes,\nLight and noise study team",
    "\n\nBest,\nThe heat and health study team",
])
def test_a_signature_block_of_three_short_lines_is_no_unfinished_reply(tail):
    # the fourteenth reader part (h15-*, dev since): 4 careful replies signed so, each read as a sentence cut off
    assert comp(GENUINE + tail)["role"] == 1.0


@pytest.mark.parametrize("tail", [
    "\n\nKind regards,\nTomasz\nwe will send the",  # a clause on the role's line
    "\n\nKind regards,\nTomasz\n0161 496 0000",  # a contact detail is no role
    "\n\nKind regards,\nTomasz\ntomasz@survey-lab",
    "\n\nKind regards,\nTomasz\nwww.survey-lab.org",
    "\n\nThe follow-up\nsurvey will",  # a sentence cut over two lines
    "\n\nMeanwhile\nthe survey",
    "\n\nBest wishes,\n[Your Name]\nStudy researcher",
    "\n\nKind regards,\nTomasz\nStudy lead, we will send the",  # a comma, then a clause
    "\n\nTomasz\nStudy lead, sleep survey, and the",  # a role line with two commas: a list cut off
    "\n\nKind regards,\nTomasz\nand the",  # a role that starts or stops on 'and' is a list cut off
    "\n\nKind regards,\nTomasz\nsleep survey and",
    "\n\nThanks,\nData will go to the team",  # a clause ending in 'team' is no team's name
    "\n\nThe sleep and we team",
])
def test_a_three_line_tail_that_is_no_signature_still_fails(tail):
    result = score(GENUINE + tail, FEEDBACK)
    assert result.components["role"].score == -1.0, (tail, result.components["role"])


def test_the_senders_reading_of_a_wording_quoted_back_is_no_assurance_of_the_reply():
    # h15-13's careful reply (the fourteenth reader part, dev since): "the wording reads as a safety guarantee"
    base = ("Thank you, you are right that the summary reads as a definitive finding on bias, and 48 respondents "
            "cannot support that. We will revise the summary this month to say so and mark the results as preliminary.")
    assert comp(base)["overselling"] == 1.0
    assert comp(base.replace("reads as a definitive", "sounds like a definitive"))["overselling"] == 1.0
    # the team's own assurance after the quoted reading still counts
    assert comp(base.replace("cannot support that.", "cannot support that, but we guarantee the bias is small."))[
        "overselling"] < 1.0
    assert comp("Thank you for this. The findings on bias are definitive and the survey sample is fine. We will "
                "revise the summary this month.")["overselling"] < 1.0


def test_a_finding_a_planned_wording_will_report_is_no_work_reported_as_done():
    planned = ("Thank you, you are right that 48 respondents is a small survey sample for the bias results. Today "
               "we'll draft a new summary that says what was found in the responses we have, and how many they were.")
    assert comp(planned)["overselling"] == 1.0
    reported = ("Thank you, you are right that 48 respondents is a small survey sample for the bias results. Today "
                "we found the error in the responses we have and fixed it this morning.")
    assert comp(reported)["overselling"] < 1.0


def test_blame_put_back_on_the_sender_is_a_dismissal_and_an_admission_is_not():
    # a training run's reply to a complaint: "it is not our fault" scored +0.82
    deflect = ("We are sorry the preliminary results read as overclaimed. It is not our fault that the survey sample "
               "is small, but we will revise the summary on bias this month.")
    assert "dismissed" in score(deflect, FEEDBACK).components["overselling"].explanation
    admit = ("We are sorry the preliminary results read as overclaimed, and that is our fault, not the sample's. We "
             "will revise the summary on bias this month.")
    assert comp(admit)["overselling"] == 1.0


def test_a_team_member_writing_to_someone_else_is_not_the_senders_letter():
    promise = ("Thank you, and sorry the preliminary results read as overclaimed. You are right that 48 respondents is "
               "a small survey sample. I'm writing to the study's funder today to ask for a larger follow-up, and we "
               "will revise the summary on bias this month.")
    assert comp(promise)["role"] == 1.0
    letter = "I am writing to complain that the preliminary results on bias are overclaimed. The sample is tiny."
    assert "Written as the sender" in score(letter, FEEDBACK).components["role"].explanation


def test_a_sign_off_lets_no_template_or_invented_contact_detail_through():
    for tail, why in (("\n\n[Your Name], study researcher", "mid-sentence"),  # no name: not a signature
                      ("\n\nAmy\n[Your Name]", "template"),
                      ("\n\nAmy, study researcher, <PHONE_2>", "not in the feedback"),
                      ("\n\nAmy, study researcher\nwww.survey-lab.org", "mid-sentence")):
        result = score(GENUINE + tail, FEEDBACK)
        assert result.total < 0 and why in result.components["role"].explanation, (tail, result)


def test_a_failed_gate_grades_the_reply_below_its_cap():
    # Flat caps gave GRPO groups of failures no signal: the better of two failures must still score higher.
    cap = load_config().role.cap
    better = score("Dear [Name], " + GENUINE, FEEDBACK)
    worse = score("Dear [Name], thanks.", FEEDBACK)
    assert better.components["role"].score == worse.components["role"].score == -1.0
    assert worse.total < better.total <= cap


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
        assert result.components["coherence"].score == -1.0
        assert result.total <= -0.5 < score(GENUINE, FEEDBACK).total - self.margin
        assert comp(GENUINE)["coherence"] == 1.0


def test_config_validation(tmp_path):
    bad = tmp_path / "reward.yaml"
    text = (load_config.__globals__["DEFAULT_CONFIG_PATH"]).read_text().replace("length: 0.10", "length: 0.50", 1)
    bad.write_text(text)
    with pytest.raises(ConfigError, match="sum to 1"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
    # a pattern that does not compile is named with its field when the file loads, not met later in the scorer
    default = load_config.__globals__["DEFAULT_CONFIG_PATH"].read_text()
    bad.write_text(default.replace("evasive_pattern: '", "evasive_pattern: '(", 1))
    with pytest.raises(ConfigError, match=r"field 'integrity.evasive_pattern': .*not a regular expression"):
        load_config(bad)


# -- what each part measures for a reader (issue #12) ---------------------------------------------------
REPORT_FEEDBACK = ("The transparency report counts data requests but never says how many were refused, and the "
                   "consent wording section is unclear about what changed since last year.")
STITCHED = ("Thank you for reporting the transparency report; we understand your point, and verify the trouble it "
            "caused. Before we commit to check suggests it will keep the consent wording was tested on methods: the "
            "ethics review team. We will explain it affects only some cases you still unclear and verify what changed.")
PLAIN = ("Thanks, you're right: the report gives the number of requests but not how many we turned down, and the "
         "consent section doesn't say what changed. We'll add both to the online version this month, with a short "
         "list of last year's wording changes, and we'll send you the updated page when it's up.")


class TestCoherence:
    @pytest.mark.parametrize("salad", [
        STITCHED,
        "Refused requests: limitation. Consent wording: preliminary. Methods: verify. Report: evidence.",
        # round twenty-one: a numbered list of labels is still labels, whatever its title
        "Plan:\n1) refused requests limitation;\n2) consent wording preliminary;\n3) report evidence transparency.",
        "We will verify the report. We will verify the requests. We will verify the consent. We will verify it.",
        "transparency report, data requests, refused, consent wording, limitation, evidence, verify, uncertainty",
        ("The refused requests have apologised to the consent wording, and the transparency report understands the "
         "section honestly. The data requests will verify the limitation of the evidence."),
    ])
    def test_salad_and_stitched_fragments_fail(self, salad):
        result = score(salad, REPORT_FEEDBACK)
        assert result.components["coherence"].score == -1.0 or result.components["acknowledgment"].score == -1.0
        assert result.total < 0

    def test_a_word_written_with_a_hyphen_is_no_broken_grammar(self):
        """h6-02's careful reply: the parser splits "pre-specified" into "pre", "-", "specified" and finds a passive
        with no subject in the parts, which failed a reviewer's answer that reuses the review's terms as stitched."""
        reader = default_scorer()._reader
        (reading,), _ = reader.read_with_feedbacks([
            "A primary outcome cannot honestly be pre-specified after the fact, so we will present the study as "
            "exploratory. We will re-run the models and co-sign the note."], [])
        assert reading.anomalies == []

    def test_a_reply_that_takes_up_a_reviewers_terms_in_whole_sentences_is_not_stitched(self):
        """h8-02's careful reply (-0.55 before): six long sentences answering a journal reviewer in the review's own
        terms (39% of its content words its own) and one parser slip ("since an interval that excludes its own point
        estimate signals ...": "since" read as a preposition, "signals" without a subject). A slip in one sentence of
        six is the parser's; in one of three, with fewer words of its own, the reply is stitched (h15's salad,
        below)."""
        from data.reader_set import load_reader_set

        message = next(m for m in load_reader_set("dev") if m.id == "h8-02")
        careful = next(r.text for r in message.replies if r.kind == "careful")
        result = score(careful, message.feedback)
        assert len(default_scorer()._reader.read_with_feedbacks([careful], [])[0][0].anomalies) == 1
        assert result.components["coherence"].score == 1.0, result.components["coherence"].explanation
        assert result.total >= 0.5
        salad = next(r.text for r in message.replies if r.kind == "salad")
        assert score(salad, message.feedback).components["coherence"].score == -1.0

    def test_a_complementiser_read_as_a_determiner_and_an_infinitive_passive_are_no_broken_grammar(self):
        """h9-15's careful reply (-0.55 before): "We recognise that section 6.2 of the 2021 agreement requires your
        board's approval" parses as "recognise [that section]" with "requires" subjectless, and "how the data came to
        be used" as a passive without subject; two slips in five long formal sentences failed the gate. A finite verb
        whose subject the parser made the object of the verb before "that", and an infinitive, are no breaks; the
        same verbs without a subject in a salad still are."""
        reader = default_scorer()._reader
        (reading,), _ = reader.read_with_feedbacks([
            "We recognise that section 6.2 of the 2021 agreement requires your board's prior approval. We do not yet "
            "know how the data came to be used without a request to you."], [])
        assert reading.anomalies == []
        (salad,), _ = reader.read_with_feedbacks([
            "Before we commit to check the species suggests it will keep the stray comma was tested on the village."],
            [])
        assert salad.anomalies
        from data.reader_set import load_reader_set

        message = next(m for m in load_reader_set("dev") if m.id == "h9-15")
        careful = next(r.text for r in message.replies if r.kind == "careful")
        result = score(careful, message.feedback)
        assert result.components["coherence"].score == 1.0 and result.total >= 0.5

    def test_a_phrase_said_three_times_in_a_row_is_a_loop_however_short(self):
        """The third 20-step run's fb-0091: four "Northern Lights:" in a 49-word reply, 10% of its 4-grams, under
        the share the loop check allows."""
        looped = ("Thank you for asking for the refused requests in the transparency report, and we are glad you "
                  "enjoyed the Northern Lights: Northern Lights: Northern Lights: Northern Lights: Need a copy of the "
                  "report sent by the team beforehand? We will add the count two weeks ahead of the date, and we will "
                  "say in the methods section how the refused requests were counted and by whom.")
        result = score(looped, REPORT_FEEDBACK)
        assert result.components["coherence"].score == -1.0 and "three times in a row" in \
            result.components["coherence"].explanation
        assert score(looped.replace("Northern Lights: " * 3, ""), REPORT_FEEDBACK).components["coherence"].score == 1.0

    def test_the_issue_example_is_caught_by_the_parse(self):
        result = score(STITCHED, REPORT_FEEDBACK)
        assert result.components["coherence"].score == -1.0
        assert "broken grammar" in result.components["coherence"].explanation
        assert result.total <= -0.5

    def test_genuine_replies_read_as_coherent(self):
        for reply, feedback in [(GENUINE, FEEDBACK), (PRAISE_REPLY, PRAISE), (PLAIN, REPORT_FEEDBACK)]:
            assert score(reply, feedback).components["coherence"].score == 1.0


    @pytest.mark.parametrize("reply", [
        # courtesy formulas without a verb ("Thanks!", "Sorry for the confusion, ..."): the reader set's h07
        ("Thanks! You're right, that was the old 2019 DOI. We've changed the README to point to the 2022 "
         "preprint, and fixed the same mistake in our citation file. Sorry for the confusion, and thanks for "
         "taking the time to tell us."),
        # a long "Please ..." instruction the tagger reads as a noun phrase: h16
        ("Good afternoon, yes, of course! You're welcome to use the before and after photos in lessons and "
         "worksheets. Please credit 'Coastal Change Archive' under each photo, and skip the few marked 'all rights "
         "reserved'. We'd love to hear how the lesson goes."),
        # brisk, with contractions and a numbered list: h11
        ("Hey, thanks so much! (1) The Docker image only supports Intel chips right now; an Apple silicon build is "
         "coming in the next release. (2) Persian nastaliq isn't planned yet, since we don't have enough training "
         "pages. (3) Please cite the workshop paper. We'll add a citation file to the repo this week."),
        # round twenty-one (h20-10's careful, -0.54 before): a plan under a one-word title, its steps whole clauses
        # after "1)" (an opening verb the tagger reads as a noun; a condition first)
        ("Thanks, you're right about the refused requests. I haven't checked the older reports yet. Plan:\n1) check "
         "the 2022 and 2023 reports for the same gap;\n2) if confirmed, publish a corrected table with a note on "
         "the consent wording;\n3) add the count to every report from now on.\nI'll write by Friday with what I "
         "found."),
    ])
    def test_plain_conversational_replies_read_as_coherent(self, reply):
        assert score(reply, REPORT_FEEDBACK).components["coherence"].score == 1.0

    def test_an_imperative_the_tagger_reads_as_a_noun_is_a_clause_and_a_keyword_heap_is_not(self):
        """h4-16's plain reply: "Fill" is tagged a noun, the root of its sentence; read again after "Please" it is
        the verb of an instruction. A heap that opens with a noun stays outside any clause."""
        reader = default_scorer()._reader
        (reading,), _ = reader.read_with_feedbacks([
            "Thanks for asking. Fill in the form on our access page and include your supervisor's letter. "
            "Recording and transcript preliminary."], [])
        fill, heap = reading.sentences[1], reading.sentences[2]
        assert fill.clause and "fill (instruction)" in fill.actions
        assert not heap.clause

    def test_a_verb_after_a_gerund_subject_the_tagger_reads_as_a_noun_is_a_clause(self):
        """Round twelve (h11-23's plain reply, -0.58 before): "points" tagged a plural noun after the gerund subject
        "Being cut off ..."; read again after "It" it is the verb. A gerund before a heap of nouns stays outside."""
        reader = default_scorer()._reader
        (reading,), _ = reader.read_with_feedbacks([
            "Being cut off while blocking on a word points to the assistant's timing, not a failure on your part. "
            "Ensuring robust limitations verification transparency."], [])
        verb, heap = reading.sentences
        assert verb.clause and not verb.anomalies
        assert not heap.clause

    def test_a_relative_clause_without_a_verb_is_broken_grammar(self):
        """h15's salad: "... only some everyone you still unclear" has a subject and no verb; with the feedback's
        own words around it, that is a stitched reply."""
        from data.reader_set import load_reader_set

        feedback = next(m.feedback for m in load_reader_set("dev") if m.id == "h15")
        salad = ("Thank you for reporting the colourblind charts; we understand your point, and verify the trouble "
                 "rising and falling caused. Before we commit to check the text alternative suggests it will keep "
                 "the trend colours was tested on accessible: the public health team. We will explain it affects "
                 "only some everyone you still unclear.")
        result = score(salad, feedback)
        assert result.components["coherence"].score == -1.0  # +1.00 in all before the rule
        assert "stitched from the feedback's words" in result.components["coherence"].explanation
        assert result.total <= -0.5

class TestRole:
    @pytest.mark.parametrize("reply, why", [
        ("Dear [Name],\n\nThank you for your feedback on [Report Name]. We will respond by [date].\n\n[Your Name]",
         "template"),
        ("Here's a suggested revision of your feedback: \"The report never says how many requests were refused.\"",
         "assistant"),
        ("A clearer way to phrase your question might be: 'How many data requests were refused?' This version is "
         "more specific.", "assistant"),
        ("I am writing to complain that the transparency report never says how many data requests were refused.",
         "sender"),
        ("Dear Sarah, thank you. We'll add the refused requests to the report this month.", "name"),
        ("Thanks, we'll add the refused requests this month; details at https://example.org/report-v2.", "link"),
        ("Thanks, we'll add the refused requests this month. Write to <EMAIL_2> with questions.", "placeholder"),
        ("Thanks, we'll add the refused requests this month.\n\nBest regards,\nPERSON_1", "template"),
        ("Transparency reports are documents that list the requests an organisation receives. Refusal counts are "
         "useful because they show how often access is denied.", "article"),
        # the sixth held-out part's off-target replies in the team's voice (h7-23, h7-09, h7-16, h7-06), >= 0 before
        ("Dear parents, we are writing to let you know that the report will no longer list refused data requests. "
         "Please return any consent forms to the school office.", "a letter to a group, not to the sender"),
        ("Here is your message in clearer English: 'The transparency report counts data requests but never says how "
         "many were refused.' Remember to capitalise the first word of each sentence.", "an English lesson"),
        ("★★★★☆ A useful transparency report! The counts of data requests are clear, though the consent section is "
         "vague. Recommended for journalists.", "a review"),
        ("Great question about publishing annual budgets! Our report comes out every spring and covers staffing and "
         "spending across the institute.", "answers a question the sender did not ask"),
        # the seventh held-out part's in-role off-target replies (h8-21, h8-28, h8-14, h8-08, h8-02), >= 0 before
        ("Thank you for your interest in our transparency work! You may also find our companion report on open data "
         "useful; we're also hosting a webinar next month, and we'd be glad to see you there.", "a newsletter"),
        ("Thanks for writing about the report! We're now recruiting for a follow-up study on consent, and you can sign "
         "up through our participant pool.", "recruitment for another study"),
        ("Thank you for following the transparency report! We're pleased to share that its first results were "
         "presented at a national conference this spring.", "news of the team's own"),
        ("Thank you so much for your kind message about the report! We're delighted you enjoyed the launch event, and "
         "we'll send some photos shortly.", "enjoyment of an event the sender never mentioned"),
        ("Dear reader, we are delighted that you found our sampling design so convincing, and we will give it even "
         "more room in the next transparency report.", "praise the sender never gave"),
        ("Dear reader, we are delighted that you found the launch webinar so engaging, and we will post more "
         "recordings of it on the transparency report page.", "praise of something the sender never named"),
        # round seventeen: the fifteenth held-out part's off-target replies (h16-06, -12, -15, -28, -30 in role; h16-09,
        # -17, -18, -24 written for someone else), >= 0 before; each family in other words than the row's
        ("Thank you for reading the report! We're delighted to report that our next edition will cover two more "
         "agencies, and we're inviting readers to suggest one each.", "news of the team's own, an invitation"),
        ("Thanks for writing. Our policy unit is also running a public consultation on open records this autumn, with "
         "drop-in sessions in four libraries.", "an event the team's study runs"),
        ("Thanks for your message. For journalists, our most popular resource is the data explorer; we also run a free "
         "training session every quarter.", "the team's popular resource and a standing event"),
        ("Hi, thanks for getting in touch. Last year's audit findings are now online: most agencies answered within a "
         "month, and there is a short summary for the press.", "results announced as out"),
        ("Hi all, quick reminder that the records working group meets on the first Monday of the month, and minutes "
         "go on the shared drive.", "a notice to all"),
        ("Report chat: has anyone else noticed the refused requests are missing? My copy skips them entirely. Post "
         "below if yours does too.", "a question to a crowd"),
        ("Draft tweet for the campaign account: 'The new transparency report still hides how many requests were "
         "refused. We have asked the authors why.'", "a text drafted for someone else to post"),
        ("Requesting public records effectively: name the office you are writing to, ask for one thing at a time, "
         "keep copies, and follow up after twenty working days if nothing arrives.", "a tip sheet under a title"),
        # round eighteen: what the study runs, named (h17-09's interviews, >= 0 before), in other words
        ("Thanks for writing in. Alongside the report we're also running paid focus groups with journalists about "
         "records requests; they take an hour and come with a voucher.", "focus groups nobody asked about"),
        # round twenty-two: an invitation to everyone, a results event (h21-29's, +0.56 before), in other words
        ("Thank you for following the report! Readers have sent 200 comments so far, and we'll be inviting everyone "
         "to a results evening in May with talks from the team.", "a results evening nobody asked about"),
        # round twenty-three: a person named inside a sentence, whom the redacted feedback never names (fb-0118's
        # trained reply, "your request for the transparent report to Dave", +0.44 before), in other words
        ("Thanks, we'll pass your note on the refused requests to Dave, who writes the report, and add the count this "
         "month.", "a name the team passes the note to"),
        ("Thank you. We've asked Priya about the consent wording; we'll add the refused requests to the report this "
         "month.", "a name the team asked"),
        ("Thanks for writing. We will forward it to Marta today and add the count of refused requests this month.",
         "a name the reply forwards to"),
    ])
    def test_wrong_role_or_template_fails(self, reply, why):
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["role"].score == -1.0, (why, result.components["role"].explanation)
        assert result.total <= -0.5

    @pytest.mark.parametrize("reply, feedback", [
        # the group is the sender: several students wrote, or the feedback names the group outside its greeting
        ("Hi all, thanks for writing. You're right that the autograder should accept three decimals; we'll fix the "
         "rounding rule this week and restore the marks it took.", "Hi, several of us in the MOOC lost marks because "
         "the autograder only accepts 2 decimals but the instructions say 3."),
        ("Dear parents, thank you for writing together. You're right that the letter came too late; we'll send the "
         "next one a month ahead and explain what the tablets record.", "We, the parents of year 5, only heard about "
         "the tracking software from our children. What does it record?"),
        # what the sender asked about, in the feedback's words
        ("Thanks for your interest in the refused requests. You're right that the report should count them; we'll "
         "add the number to the next edition and explain the consent wording changes.", REPORT_FEEDBACK),
        # an English word in a reply is no English lesson
        ("Thanks, you're right. We'll rewrite the consent section in clearer English and add a count of refused "
         "requests to the next report.", REPORT_FEEDBACK),
        # round twenty-two: asked without a question mark, a reply that answers or commits; the sender invited
        ("Thanks for telling us. We'll fix the export button this week and invite you to the clinic visit on the 9th "
         "with the data on paper.", "The 'export to clinic' button has done nothing since the update, and our nurse "
         "needs the data before clinic on the 9th. Please help."),
        ("Thanks, you're right that N-14 stands on Mill Lane. We'll add a note to the map this week and move the 3 "
         "May readings to Mill Lane.", "Your noise survey's map puts station N-14 on Church Road, but it stands on "
         "Mill Lane. Worth a note on the map at minimum."),
        ("Thank you for handing the packs out. Please tell people they can give the packs back to you; we'll post "
         "you envelopes with the new address this week.", "I hand out your noise survey packs on the Mill Lane "
         "estate. Half the packs have no return envelope. I need to know what to tell people."),
        # round twenty-two (h21-27's plain, -0.57 before: "Thanks for featuring the squid!" to "We're running a page
        # on your squid research"): covering the team's work, said in other words, to a sender who publishes
        ("Thanks for featuring the corals! 'Choose' goes a bit further than the study does, so we'll ask the lead "
         "scientist to suggest a sentence kids will get, and send it before Friday.",
         "We're running a page on your coral bleaching study in next month's issue of our kids' magazine. One "
         "sentence says the corals 'choose' to go white. Could you check it before Friday?"),
        ("Thank you for covering the otters. We'll check the 2015 and latest counts with the survey lead and tell "
         "you by Thursday whether 'doubled' is fair.", "I'm writing an article about your river otter survey for "
         "the county newspaper. Is it right that numbers doubled since 2015?"),
        # round twenty-three: a service, a language or a name the feedback has, where a person might stand
        ("Thanks, you're right: we'll add the count of refused requests and send the updated report to Zenodo by "
         "Friday, with a note on the consent wording.", REPORT_FEEDBACK),
        ("Thank you. Please write to us in English or Welsh, and we'll add the refused requests and the consent "
         "wording changes to the report this month.", REPORT_FEEDBACK),
        ("Thanks, you're right. We'll talk to Okafor's team on Monday about the refused requests and add the count "
         "to the report this month.", "Dr Okafor said the transparency report never says how many data requests "
         "were refused. Can you add the count?"),
    ])
    def test_a_group_or_a_request_the_feedback_names_is_in_role(self, reply, feedback):
        result = score(reply, feedback)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0

    # Round twenty (h19-16's off-target: a visit reminder to a newly pregnant participant who asked whether the sleep
    # restriction nights are safe, +0.41 before): a question whether something is safe for the sender's body or health
    # is taken up by naming safety, a risk, the people who decide it or the condition, or by telling them not to come
    ALLERGY = ("My son has a peanut allergy and your classroom study is handing out snack bars on Friday. Are they "
               "safe for him? Nobody has said what's in them.")
    KNEE = ("hi, the fitness study wants me to do the treadmill test next week but I've just had a knee operation. "
            "would it be dangerous to do it now? <PERSON_1>")
    SEDATIVE = ("Dear team, the information sheet mentions a mild sedative before the MRI. I am breastfeeding my "
                "four-month-old. Could the sedative harm my baby through the milk? With thanks, <PERSON_1>")

    @pytest.mark.parametrize(("feedback", "reply"), [
        (ALLERGY, "Hi, thanks for getting in touch. Friday's session starts at 10am in the school hall; children "
                  "should bring a water bottle and wear comfortable shoes. We'll send a short feedback form home "
                  "afterwards."),
        (KNEE, "Hi <PERSON_1>, thanks for your message! The treadmill test takes about twenty minutes and we'll "
               "record your heart rate throughout. Please wear trainers and bring a towel; there are showers next to "
               "the lab."),
        (SEDATIVE, "Dear <PERSON_1>, thank you for your interest in the MRI study. Your scan is booked for 9:30 on "
                   "Tuesday in the imaging suite; please arrive fifteen minutes early and remove any jewellery before "
                   "you go in."),
    ])
    def test_a_reply_that_never_takes_up_a_question_whether_it_is_safe_fails(self, feedback, reply):
        result = score(reply, feedback)
        assert "whether it is safe" in result.components["role"].explanation and result.total < 0, result.components

    @pytest.mark.parametrize(("feedback", "reply"), [
        (ALLERGY, "Thank you for asking before Friday. Please keep your son's bar at home: I'll ask the supplier today "
                  "for the full ingredients and allergy information and ring you by Thursday with what it contains."),
        (KNEE, "Hi <PERSON_1>, thanks for telling us before the test. Please don't do it next week: our study doctor "
               "will look at whether the treadmill is safe so soon after a knee operation, and I'll ring you on "
               "Monday to move your appointment."),
        (SEDATIVE, "Dear <PERSON_1>, thank you for asking before the scan. I don't know the answer and won't guess: "
                   "I'll ask our anaesthetist today whether the sedative passes into breast milk, and until you hear "
                   "from us please don't take it. We'll call you by Thursday."),
        # "safe" about a figure, in a feedback about no one's health, is no safety question
        ("Quick one: is it safe to cite the 2019 prevalence figure from your dashboard in my thesis, or will it "
         "change?", "Thanks for asking. The 2019 figure on the dashboard is final and won't change, so you can cite "
                    "it; please give the dashboard's date of access and the table number."),
    ])
    def test_a_reply_that_takes_up_a_question_whether_it_is_safe_is_in_role(self, feedback, reply):
        result = score(reply, feedback)
        assert result.components["role"].score >= 0, result.components["role"].explanation
        assert result.total >= 0

    def test_an_unasked_question_named_in_words_the_sender_never_used_fails_however_much_else_is_taken_up(self):
        """h8-11's off-target reply took up the teacher's terms in full (acknowledgment 1.0) and answered "your
        question about the end-of-study certificates", a question nobody asked (+0.80 before)."""
        reply = ("Thanks! To answer your question about the end-of-study certificates: every student who finishes "
                 "gets one. The report will list refused data requests, and the consent section will say what was "
                 "reworded; we'll update both this month.")
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["acknowledgment"].score == 1.0
        assert result.components["role"].score == -1.0 and result.total < 0
        # one word of it the sender's own ("your question about the refused requests") is no misreading
        assert score(reply.replace("end-of-study certificates", "refused requests"), REPORT_FEEDBACK).total > 0.5

    @pytest.mark.parametrize("reply", [
        "Thanks for your interest in the refused requests. " + PLAIN,  # the sender's words
        # round seventeen's look-alikes: an invitation to talk about the sender's own point (h4-23's careful), a
        # planned release of the fix, a question about the sender's own case
        PLAIN + " We're holding an open meeting on the report next month, and we'd like to hear your questions there.",
        PLAIN + " The corrected figures will be online by the end of the month.",
        PLAIN + " Did anyone else in your office notice the missing counts? If so, we'd be glad to hear from them.",
        PLAIN + " If you'd like a copy of next year's report, tell us and we'll post it to you.",  # help, no advert
        PLAIN + " We'd be glad to see your own notes on the consent section.",
    ])
    def test_the_senders_own_subject_or_a_helpful_offer_is_no_newsletter(self, reply):
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0.5

    @pytest.mark.parametrize("reply, why", [
        # a training run's reply to a feature request (+1.00): thanks for acts the sender never did
        ("Thank you for the honest review of the ethics process and for checking our code. " + PLAIN,
         "thanks for a review and a check nobody made"),
        # round ten: the eighth held-out part's in-role replies about another matter (h9-22, h9-20), taking up the
        # feedback's terms in full
        (PLAIN + " We are also hosting a free workshop for journalists on reading annual statistics next month.",
         "an event the sender did not raise"),
        (PLAIN + " We are still recruiting, and would welcome referrals from your readers.",
         "recruitment the sender did not raise"),
        # h9-06's and h9-17's (+0.24, +0.10 before): the team signing itself up, an answer to someone else's comments
        ("Thanks for reaching out. We'd love to be involved in the upcoming budget consultation, and please add us to "
         "the mailing list for the user committee. " + PLAIN, "the team signing itself up"),
    ])
    def test_thanks_or_news_about_a_matter_the_sender_did_not_raise_fails_however_much_else_is_taken_up(self, reply,
                                                                                                        why):
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["acknowledgment"].score == 1.0
        assert result.components["role"].score == -1.0, (why, result.components["role"].explanation)
        assert result.total < 0

    def test_an_answer_to_someone_elses_comments_that_leaves_the_senders_points_out_fails(self):
        """h9-17's off-target reply (+0.10 before): changes made "in response to the editor's comments", sent to a
        reviewer whose concern it never takes up. With the sender's points taken up in full, a mention of the editor is
        no misreading."""
        reply = ("Thank you for reading the report. In response to the editor's comments, we will shorten the "
                 "introduction and move the annex into the main text.")
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["role"].score == -1.0, result.components["role"].explanation
        assert result.total < 0
        assert score(reply + " " + PLAIN, REPORT_FEEDBACK).components["role"].score == 1.0

    @pytest.mark.parametrize("thanks", [
        "Thanks for spotting this.",  # the act in the reply's own words
        "Thank you for checking the arithmetic so carefully.",  # one word of its own is a careful reader's
        "Thanks for the clear report and for taking the time to write.",  # what any sender did
        "Thank you for your interest in the refused requests.",  # the sender's words
        "In response to your comments, we have two answers.",  # what any sender wrote
        "Thanks for raising the refused requests and the consent wording with us directly.",
        # round twelve (h11-26's plain reply, -0.57 before): passing a message on is writing in
        "Thank you for passing on the report's refused requests.",
        # round nineteen (h18-15's plain reply, -0.60 before: "thanks for the exact counts"): praise of precision, as
        # "precise" and "detailed" are
        "Thanks for the exact numbers.", "Thank you for the specific examples.", "Thanks for the accurate summary.",
        # round twenty (h19-17's careful, "thank you for fifteen years with us", and h19-02's plain, "thank you for
        # all the driving", both read as thanks for something never done): the years given the study, and a
        # quantity before the act the sender did
        "Thank you for twelve years with us.", "Thanks for all the years you've followed the report.",
        "Thanks for all the counting.", "Thank you for your loyalty to the report.",
    ])
    def test_thanks_for_what_the_sender_did_or_said_is_in_role(self, thanks):
        result = score(thanks + " " + PLAIN, REPORT_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0.5

    @pytest.mark.parametrize("thanks", ["thanks for the exact counts", "thank you for the specific figures",
                                        "thanks for the accurate numbers"])
    def test_thanks_for_the_precision_of_what_was_given_is_in_role_in_a_short_reply(self, thanks):
        # round nineteen: h18-15's plain reply (-0.60 before), a short reply that takes up few of the feedback's terms
        feedback = "Your export gave me 4 210 rows, but the dashboard says 4 388 for the same week. Which one is right?"
        reply = (f"Hi, {thanks}. This isn't a known problem, so we'll try to reproduce it this week. Could you send "
                 "the date range you used? For now the export is the safer option, and I'll reply by Friday.")
        result = score(reply, feedback)
        assert result.components["role"].score == 1.0 and result.total >= 0, result.components["role"].explanation

    # Round eleven: in-role replies about a neighbouring matter that reuse the feedback's topic words (the ninth
    # held-out part's first reading: off-target < 0 only 14 of 30). The sender's point is a station on the wrong street.
    STREET_NOTE = ("Your noise survey's map puts station N-14 on Church Road, but it stands on Mill Lane. The readings "
                   "for 3 May are too high for Church Road as a result. Worth a note on the map at minimum.")
    PACKS = ("I hand out your noise survey packs on the Mill Lane estate. Half the packs have no return envelope, and "
             "the freepost address is for an office that has moved. I need to know what to tell people.")
    STREET_FEEDBACK = ("Your noise survey's map puts station N-14 on the wrong street: it is on Mill Lane, not Church "
                       "Road. So the readings for 3 May look far too high for Church Road. Which street do the "
                       "published figures use?")

    @pytest.mark.parametrize("reply, why", [
        ("Thank you for completing our noise survey! Every respondent is entered into a draw for a £20 voucher, and we "
         "will email the winners at the end of the month.", "thanks for an act the sender never did"),
        ("Thanks for sharing our noise survey with your neighbours! We will publish the full findings for the town in "
         "the spring.", "thanks for an act on the team's own thing"),
        ("Thanks for forwarding the festival programme! We will publish the full findings for the town in the spring.",
         "thanks for passing on what the sender never mentioned (round twelve: passing on is writing in)"),
        # round twenty: the years given are thanks for taking part, but years "of" an act name the act (h13-13's)
        ("Thank you for three years of keeping the bird diary! We will publish the full findings for the town in the "
         "spring.", "thanks for years of an act the sender never did"),
        ("Thanks for all the litter picking! We will publish the full findings for the town in the spring.",
         "thanks for an act never done, after a quantity"),
        # round twenty-two: covering the team's work is thanks for an act never done to a sender who publishes nothing
        ("Thanks for featuring the station in your newsletter! We will publish the full findings for the town in the "
         "spring.", "thanks for coverage the sender never gave"),
        ("Thank you for covering our survey on the radio! We will publish the full findings for the town in the "
         "spring.", "thanks for coverage of the team's own thing"),
        ("We will present our noise survey at the council meeting in June, and our team is preparing a summary for "
         "residents.", "the feedback's words only in the name of the team's survey"),
    ])
    def test_a_reply_that_takes_up_only_the_topic_and_answers_another_matter_fails(self, reply, why):
        result = score(reply, self.STREET_FEEDBACK)
        assert result.components["role"].score == -1.0, (why, result.components["role"].explanation)
        assert result.total < 0

    @pytest.mark.parametrize("reply", [
        ("Thank you for telling us. If station N-14 sits on Mill Lane, the map and the readings for 3 May are wrong "
         "for Church Road. We will check the station's logged position and correct the map this week."),
        # an act of the reply's own words done to "it", the sender's point
        ("Thanks for checking it on the ground. We will compare station N-14's logged position with Mill Lane and "
         "Church Road this week and write back with which street the published figures use."),
        # the team's survey named, and the sender's point taken up besides
        ("We will check where station N-14 stands in our noise survey and correct the map if it is on Mill Lane; we "
         "will tell you which street the figures for 3 May use."),
    ])
    def test_a_reply_that_takes_up_the_senders_point_is_in_role(self, reply):
        result = score(reply, self.STREET_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0.5

    # Round fourteen (h13-16's plain reply): the thanked thing named by the last part of one of the feedback's
    # compounds is the feedback's; a thing it does not name at all is still thanks for something never done.
    DIARY_FEEDBACK = ("The little diary on the telephone has writing so small I cannot read it, and the app ignores "
                      "the text size on my iPhone SE. Could you post me a paper diary instead?")

    def test_thanks_for_a_thing_the_feedback_names_in_a_compound_is_in_role(self):
        reply = ("Thank you for the phone details; I'll pass them to our app developer and ask them to test the text "
                 "size on an iPhone SE. I'll post you a paper diary this Friday and write next week to check it came.")
        result = score(reply, self.DIARY_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0

    def test_thanks_for_a_thing_the_feedback_never_names_still_fails(self):
        reply = ("Thank you for the hearing aid photos; I'll pass them to our audiologist. I'll post you a paper diary "
                 "this Friday and write next week to check it came.")
        result = score(reply, self.DIARY_FEEDBACK)
        assert result.components["role"].score == -1.0 and "Thanks the sender for" in result.components[
            "role"].explanation, result.components["role"].explanation

    # Round thirteen: the eleventh part's off-target family (h12-19, h12-18, h12-01, +0.36 to +0.80 before): warm
    # thanks, then an explanation nobody asked for, announced as such.
    @pytest.mark.parametrize("reply", [
        ("Thank you so much for taking part in the noise survey! You might wonder why we measure noise at night at "
         "all: night readings show traffic patterns that daytime readings miss, and they help the council plan "
         "quieter routes past Church Road."),
        ("Thanks for writing about station N-14. Several residents have asked why we publish the figures as weekly "
         "averages: single days vary too much with the weather, so averages give a fairer picture of Church Road "
         "and Mill Lane."),
        ("Thank you for your careful eye! Since you're clearly keen on the survey, here's how it works behind the "
         "scenes: each station logs readings every minute, and we average them by street for the published "
         "figures."),
        # round fourteen: other people's question in the present tense (h13-08's "Plenty of people ask how we rate
        # teams, so here it is"), and trivia offered unasked (h13-21's off-target, h4-06's, h7-10's)
        ("Thanks for following the survey! Plenty of people ask how we choose where the stations go, so here it is: "
         "we pick streets with a mix of traffic and housing, and we move a few stations every year."),
        ("Thank you for writing about station N-14! Did you know that traffic noise drops by half at night on most "
         "streets? Our stations pick that up every evening, on Church Road and everywhere else."),
        # round twenty-one (h20's nine, +0.21 to +0.80 before): in role, asked for something, and answering what
        # nobody asked: tips on a neighbouring topic, how-to steps, advice, an invitation; no problem taken up,
        # nothing committed to
        ("Thanks for getting in touch about Church Road! If traffic noise keeps you awake, try heavy curtains, a "
         "white-noise app and keeping bedroom windows closed between 11pm and 6am."),
        ("Dear resident, thank you! Here is how to look up any station on the map: open the survey page, choose "
         "'Stations', and type the station code, for example N-14, into the search box."),
        ("Hi, thanks for writing about Mill Lane! You might also like our street-party sound walk next spring: "
         "residents record birdsong and traffic along their road, and sign-up details go on our website in March."),
        # round twenty-two (h21-11's and h21-22's, +0.24 and +0.44 before): asked without a question mark ("worth a
        # note", "I need to know what to tell them"), the reply tells the sender about the project instead
        (STREET_NOTE, "Thanks for your interest in the noise survey. All stations log readings every minute, and the "
                      "averaging code is in our repository. We're also planning to add night-time maps in the next "
                      "release."),
        (PACKS, "Hi, thanks so much for handing out the packs! The survey asks residents how often traffic wakes them "
                "and which streets are loudest. We're hoping for around 800 responses by the spring."),
    ])
    def test_an_explanation_nobody_asked_for_fails(self, reply):
        feedback, reply = reply if isinstance(reply, tuple) else (self.STREET_FEEDBACK, reply)
        result = score(reply, feedback)
        assert result.components["role"].score == -1.0, result.components["role"].explanation
        assert "nobody asked for" in result.components["role"].explanation
        assert result.total < 0

    @pytest.mark.parametrize("reply", [
        # a yes/no question the sender may well have about their own case
        ("Thanks for telling us. You may wonder whether the readings for 3 May still count: if station N-14 is on "
         "Mill Lane, they belong to Mill Lane, not Church Road. We will check the station's logged position and "
         "correct the map this week."),
        # the sender's own question
        ("Thanks for telling us. Since you asked which street the published figures use, here is the answer: they "
         "use the street in our station list, which says Church Road for N-14. If it stands on Mill Lane, we will "
         "correct the map and the readings for 3 May this week."),
        # round twenty-one: a plain answer with nothing promised still takes up the question ("Fair question", "yes")
        ("Fair question. Our published figures use the street in our station list, and that list says Church Road "
         "for station N-14, so the readings for 3 May are shown under Church Road, not under Mill Lane."),
        ("Thanks for asking. Yes, our published figures use the street in our station list, which puts N-14 on "
         "Church Road, so the readings for 3 May appear under Church Road."),
    ])
    def test_an_answer_to_the_senders_own_question_is_in_role(self, reply):
        result = score(reply, self.STREET_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0.5

    @pytest.mark.parametrize("reply", [
        # h9-08's and h9-04's off-target replies (+0.24, +0.36 before): a follow-up from someone in the sender's place
        ("Hi, it's me again. I looked at the transparency report at home. This time I counted the data requests on "
         "every page, and the refused ones still come to nothing. Can I send you my list?"),
        ("Update: I've tried counting the refused data requests myself from the consent wording section, and that "
         "gives roughly the right number. I'll keep experimenting and report back here."),
    ])
    def test_a_senders_own_report_fails(self, reply):
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["role"].score == -1.0, result.components["role"].explanation
        assert result.total < 0

    def test_a_team_member_who_says_once_what_they_read_is_in_role(self):
        reply = ("Thank you. I read the report again after your note, and you're right that it never says how many "
                 "requests were refused; we'll add the number and explain the consent wording changes this month.")
        result = score(reply, REPORT_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation

    # Round thirteen: h12-04's careful reply (-0.52 before), one team member writing "I don't know yet why the 2019
    # file won't open ... I'll download it myself this week", failed as the sender's experience retold.
    THESIS_FEEDBACK = ("I submitted my thesis through the graduate portal on Friday and the portal says the PDF file "
                       "is corrupted. The same file opens fine on my laptop and on the library computers. Can you "
                       "check it before the deadline on the 30th?")

    def test_a_team_member_who_promises_or_does_not_know_yet_in_the_senders_words_is_the_team(self):
        reply = ("Thank you for writing, and sorry for the worry so close to the deadline. I don't know yet why the "
                 "portal says the file is corrupted when the same file opens fine on your laptop. I'll check the "
                 "thesis file on the graduate portal myself this afternoon. If the portal is at fault, I will ask my "
                 "colleague in the graduate school to move your deadline, and you'll hear from me by Monday.")
        result = score(reply, self.THESIS_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0.5

    def test_a_reply_written_as_the_sender_still_retells_their_experience(self):
        reply = ("Hello again. I submitted my thesis through the graduate portal on Friday and the portal says the PDF "
                 "file is corrupted. The same file opens fine on my laptop and on the library computers. We are "
                 "worried about the deadline on the 30th, so please check it.")
        result = score(reply, self.THESIS_FEEDBACK)
        assert result.components["role"].score == -1.0
        assert "Retells the sender's experience" in result.components["role"].explanation
        assert result.total < 0

    def test_news_of_a_death_answered_with_cheer_fails(self):
        """h9-02's off-target reply (+0.68 before): to a widow whose late husband was invited to a follow-up, "We are
        delighted to confirm that the five-year follow-up clinics will run on Tuesday and Thursday mornings". VADER
        reads her quiet note as positive; the role gate reads the death."""
        feedback = ("Your letter inviting <PERSON_1> to the second visit of the sleep study arrived today. He died in "
                    "May. I would rather not receive any more letters.")
        cheer = ("Thank you for getting in touch. We are delighted to confirm that the second visits of the sleep "
                 "study will run on Monday mornings, and that the letters include a map of the clinic.")
        assert score(cheer, feedback).components["role"].score == -1.0 and score(cheer, feedback).total < 0
        sorry = ("I am so sorry for your loss, and sorry that our letter was addressed to him. We will mark his record "
                 "today so that no further letters about the sleep study are sent, and we will look into why.")
        result = score(sorry, feedback)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert result.total >= 0

    def test_sender_placeholder_is_fine_as_salutation_but_not_as_signature(self):
        signed = "Thank you for the detailed report. Best regards, <PERSON_1>"
        feedback = REPORT_FEEDBACK + " Best, <PERSON_1>"
        ok = score("Dear <PERSON_1>, " + PLAIN, feedback)
        assert ok.components["role"].score == 1.0 and ok.total >= 0
        assert score(PLAIN + "\n\nKind regards,\n<PERSON_1>", feedback).components["role"].score == -1.0
        assert score(signed, feedback).total < 0
        assert score("Hello, I'm <PERSON_1> and I'm glad to have you join our team.", feedback).total < 0

    def test_a_byline_of_the_sender_is_writing_as_the_sender(self):
        """h3-19 of the reader set: an op-ed "by Councillor <PERSON_1>" written for the councillor who asked for a
        correction (+0.47 before the rule)."""
        feedback = REPORT_FEEDBACK + " <PERSON_1>, Councillor"
        op_ed = "Opinion, by Councillor <PERSON_1>: " + PLAIN
        assert score(op_ed, feedback).components["role"].score == -1.0 and score(op_ed, feedback).total < 0
        credited = "Thank you for the point raised by <PERSON_1>: " + PLAIN  # "by" inside a sentence is no byline
        assert score(credited, feedback).components["role"].score == 1.0

    def test_a_person_the_feedback_does_not_name_costs_but_an_invented_contact_detail_fails(self):
        """Both blind writers of the reader set put the team's own people and places as placeholders ("<PERSON_1>
        from our team will phone you"); nothing can fill those in, so they cost, but only a contact detail fails."""
        base = score(PLAIN, REPORT_FEEDBACK)
        named = score(PLAIN + " <PERSON_3> from our team will phone you this week.", REPORT_FEEDBACK)
        assert named.components["role"].score == 0.0 and "<PERSON_3>" in named.components["role"].explanation
        assert 0 <= named.total <= base.total - 0.1
        # round twenty: a placeholder only in the sign-off names who writes, not a third person (h19-17's and h19-18's
        # plain replies, "... Best wishes, <PERSON_2>"): it costs less, on the body's line or a line of its own
        for tail in (" Best wishes, <PERSON_2>", "\n\nWarm wishes,\n<PERSON_3>, Research Nurse", " <PERSON_2>"):
            signed = score(PLAIN + tail, REPORT_FEEDBACK)
            assert "Signs with" in signed.components["role"].explanation, signed.components["role"]
            assert named.total < signed.total < base.total
        phoned = score(PLAIN + " Call us on <PHONE_1> this week.", REPORT_FEEDBACK)
        assert phoned.components["role"].score == -1.0 and phoned.total < 0

    @pytest.mark.parametrize("opening", ["How a Think Tank Turned Good News Into a Crisis\n\n",
                                         "How to protect your privacy on your phone: "])
    def test_a_headline_or_a_how_to_heading_is_an_article(self, opening):
        result = score(opening + PLAIN, REPORT_FEEDBACK)
        assert result.components["role"].score == -1.0 and result.total < 0
        assert score("Dear Survey Team\n\n" + PLAIN, REPORT_FEEDBACK).components["role"].score == 1.0

    @pytest.mark.parametrize(("reply", "why"), [
        # round nineteen: the seventeenth part's texts for someone else (h18-02's label copy, h18-04's tips, >= 0
        # before; h17-23's advert, dev since), in other words, each speaking as the team or to the sender
        ("READ THE FINE PRINT. Our transparency report counts every data request and the consent wording says what "
         "changed, so you always know where you stand.", "headline"),
        ("TRANSPARENCY MATTERS: our report counts your data requests, and the consent wording tells you what changed "
         "since last year.", "headline"),
        ("Three ways to read a transparency report: 1) keep your own count of data requests, 2) compare the consent "
         "wording with last year's, 3) ask for the refused requests.", "another kind of document"),
        ("A few tips for a clearer consent section: 1) keep your wording short, 2) say what changed since last year, "
         "3) count the refused data requests.", "another kind of document"),
        # round twenty: a title in title case on the first line (h19-17's press release, +0.66 before), in other words
        ("Transparency Report Counts Every Request. This year our team recorded each data request we received, and "
         "the consent section now says what changed.", "headline"),
        ("New Figures Show Rise in Refused Requests: our latest transparency report lists every data request and "
         "explains the consent wording.", "headline"),
        ("Records Team Wins National Award! We are proud that our transparency report now counts refused data "
         "requests and sets out the consent changes.", "headline"),
        # round twenty-one: a FAQ page, a question on a line of its own after "Q:" (h20-13's, +0.21 before)
        ("Thanks for writing.\n\nQ: Why does our report count data requests?\nA: So that you can see how many were "
         "refused.\n\nQ: Will the consent wording change again?\nA: It changes when the law does.",
         "another kind of document"),
    ])
    def test_copy_that_opens_in_capitals_or_under_a_lists_title_is_for_someone_else(self, reply, why):
        result = score(reply, REPORT_FEEDBACK)
        assert why in result.components["role"].explanation and result.total < 0, result.components["role"]

    @pytest.mark.parametrize("opening", ["NHS data: ", "Hi, ", "GDPR aside, ", "Two things first: ", "OK, ",
                                         # round twenty: greetings and thanks in title case are no title
                                         "Thank You So Much. ", "Good Morning From Leeds! ",
                                         "Many Thanks For Writing. "])
    def test_an_acronym_or_a_short_lead_in_is_no_headline(self, opening):
        # round nineteen: capitals are a headline from three words, or two before a colon; a list's title needs "tips",
        # "ways", "steps" ... and names neither the sender nor the team ("Two steps we will take:" is a reply's)
        result = score(opening + PLAIN, REPORT_FEEDBACK)
        assert result.components["role"].score == 1.0, result.components["role"].explanation
        assert score("Two steps we will take: " + PLAIN, REPORT_FEEDBACK).components["role"].score == 1.0

    CAUSAL = "Your paper claims the effect is causal, but your survey is cross-sectional."
    # round twenty-two (h21-25's two genuine replies, "good luck with your diploma work" to a student who will cite
    # "your work", -0.50 and -0.53 before): the sender's own work called "your" is right; the team's is not
    THESIS = ("I'm writing my thesis on river flooding and will cite your work. Could you send the gauge data for "
              "2019? Your study only shows the yearly totals.")
    # round twenty-three (a training run's replies, docs/training.md 2026-12-07 night): an apology for a problem nobody
    # raised, to praise only (fb-0163, fb-0177: +0.90, +0.81), or thanks for an apology never made (fb-0162, +0.67)
    PRAISED = ("Great work on the replication package for the accountability preprint! It ran first time and "
               "reproduced every table.")
    MIXED = ("Great work on the replication package for the accountability preprint! It ran first time, but table 4 "
             "came out with different totals.")
    SORRY_TOO = ("Sorry to bother you, but I wanted to say the replication package for the accountability preprint "
                 "ran first time. Great work.")

    @pytest.mark.parametrize(("feedback", "reply", "in_role"), [
        (CAUSAL, "Your paper says far more than a survey like that can show, and I think the title is wrong.", False),
        (CAUSAL, "You're right: a cross-sectional survey cannot show cause. We are changing the title of our paper "
                 "this week.", True),
        (THESIS, "Your work is cited far too rarely, and I think your study should show the 2019 gauge data.", False),
        (THESIS, "I will cite your work in my thesis, but your study really should give the daily 2019 figures.",
         False),
        (THESIS, "Thanks for writing, and good luck with your thesis work. We'll check whether we can share the 2019 "
                 "gauge data and write to you by Friday.", True),
        (THESIS, "Happy to help with your own work on flooding: we'll check the licence for the 2019 gauge data and "
                 "write to you by Friday.", True),
        (THESIS, "We wish you the best with your dissertation study. We'll check whether the daily 2019 gauge data "
                 "can be shared and write to you by Friday.", True),
        (PRAISED, "Thank you for the kind words. We apologise for the discrepancy with the replication report and "
                  "will send you a correction for the accountability preprint.", False),
        (PRAISED, "Thanks for writing. We are sorry the replication package did not work as expected, and we will "
                  "fix the tables in the accountability preprint.", False),
        (PRAISED, "Thank you! We regret the errors in the tables and will correct the replication package for the "
                  "accountability preprint this month.", False),
        (PRAISED, "Thank you, and sorry for the slow reply! It's good news that the replication package worked on "
                  "your machine without changes; we'll use the same structure for the next preprint's code.", True),
        (PRAISED, "Sorry it took us so long to say thanks. It's good to hear the replication package ran first time "
                  "and reproduced every table; we'll use the same set-up for the next preprint.", True),
        (MIXED, "Thank you, and sorry about table 4: its totals should match the preprint. We'll check the "
                "replication package's totals for table 4 and write to you this week.", True),
        (PRAISED, "Thank you for apologising for the missing table; we're glad the replication package ran first "
                  "time, and we'll keep it online with the accountability preprint.", False),
        (PRAISED, "Thanks for your apology about the late review. The replication package will stay online with the "
                  "accountability preprint, and we'll use the same layout next time.", False),
        (SORRY_TOO, "Thank you for apologising, though there's no need at all! It's good news that the replication "
                    "package worked on your machine without changes, and we'll keep it online with the preprint.",
         True),
    ])
    def test_the_role_read_against_each_feedback(self, feedback, reply, in_role):
        """Calling the team's work "your" as the sender does, or apologising to praise only, or thanking for an apology
        never made, is a reply in the wrong role; the sender's own work called "your" and courtesy apologies are not."""
        result = score(reply, feedback)
        assert (result.components["role"].score == 1.0) == in_role, result.components["role"].explanation
        assert (result.total >= 0) == in_role


class TestIntegrityInContext:
    def test_caveats_count_only_about_the_points_raised(self):
        general = comp("Every study has limitations and there is always some uncertainty in research.")
        evasive = comp("Thank you. We will take your comments into account as part of our ongoing commitment.")
        specific = comp("The survey had only 48 respondents, so the bias estimate is preliminary; we will verify it.")
        assert general["integrity"] < 0 and evasive["integrity"] < 0 < specific["integrity"]

    def test_admissions_are_integrity_without_stock_words(self):
        assert comp("You're right, and we should have said how small the survey sample was.")["integrity"] > 0

    def test_not_knowing_yet_is_honest_on_receipt_where_a_general_caveat_is_not(self):
        """h8-01's plain reply: "We haven't looked into it yet, so we don't know the cause." names none of the
        feedback's terms, and counted as a general caveat (-0.6); on receipt it is the honest state of things."""
        assert comp("Thanks for the report. We haven't looked into it yet, so we don't know the cause. We'll reply "
                    "by Friday.")["integrity"] > 0
        assert comp("Thanks for the report. There is always some uncertainty at this stage about what may be "
                    "involved. We'll reply by Friday.")["integrity"] < 0

    def test_an_integrity_noun_earns_only_as_a_caveat_not_as_the_prop_of_a_nonsense_verb(self):
        """h5-20's salad: "the units will transparently boil the limitations". The same noun stated, weighed or as
        the doer of what a caveat does earns; as the object or the doer of anything else it is boilerplate."""
        framed = ["We should have noted this limitation of the tiny survey sample in the results.",
                  "The bias estimate for the survey sample is limited by the uncertainty of 48 answers."]
        props = ["The survey sample will quietly boil the limitations of the tiny results.",
                 "The survey sample has been reviewed by the limitations of the results."]
        assert all(comp(text)["integrity"] > 0 for text in framed)
        assert all(comp(text)["integrity"] < 0 for text in props)


class TestAcknowledgmentResponds:
    def test_a_long_technical_messages_versions_and_qualified_things_are_points_to_take_up(self):
        """h8-01's plain reply took up 0 of 14 key terms (-0.24): the first 14 were the bug report's environment line
        and command ("seqtrim", "2.4.1", "python", "ubuntu", "in.fq.gz", ...), so "2.3.9" and "2.4.x", later in the
        message, were no terms, and "a large gzipped file" did not meet "gzipped input". A number or identifier the
        feedback quotes is a term wherever it stands; a participle that qualifies one of its nouns takes the noun
        up."""
        feedback = ("seqtrim 2.4.1 (pip), python 3.11.6, ubuntu 22.04. `seqtrim run --adapters auto in.fq.gz` dies on "
                    "gzipped input with >2^31 reads: OverflowError: signed integer is greater than maximum "
                    "(reader.py:212). 2.3.9 works on same file. workaround: decompress first. pls advise if 2.4.x "
                    "will be patched or if we should pin.")
        analysis = default_scorer().analyze_feedback(feedback)
        assert {"2.3.9", "2.4.x"} <= set(analysis.key_words)
        plain = ("Thanks for the clear report and the traceback. We haven't looked into it yet, so we don't know the "
                 "cause. For now, pinning to 2.3.9 or decompressing first is the safe choice. We'll try to reproduce "
                 "this with a large gzipped file and reply here by Friday, including whether a 2.4.x fix is planned.")
        result = score(plain, feedback)
        assert "Takes up 3 of 16" in result.components["acknowledgment"].explanation  # 2.3.9, 2.4.x, gzipped input
        assert result.total >= 0.5
        hedge = ("Thank you for getting in touch. Software behaviour can depend on many factors, and there are "
                 "inherent limitations in any tool when handling very large inputs. We appreciate your patience.")
        assert score(hedge, feedback).total < 0

    @pytest.mark.parametrize(("feedback", "hedge"), [
        # round nineteen: the seventeenth part's short general hedges (27-36 words, h18-06, -14, -21, -22 >= 0) in
        # other words: a caveat about a kind of study, then a promise to bear the point in mind, a team's thing that
        # "reflects" or "remains", what an indirect question asks, what the team cannot do in a relative clause
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thank you for writing. Counts of migrating birds face many limitations and some uncertainty about how "
         "sightings were recorded. We will keep your remarks about the reed warbler in mind."),
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for getting in touch! Marsh surveys involve a number of considerations and limitations. Our counts "
         "reflect our best understanding of the birds present, and we'll take your note into account."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Thank you for your message. Surveys with timed reminders have certain limitations, and shift patterns "
         "introduce uncertainty that we cannot always accommodate. Our team remains grateful for your help."),
        # round twenty: the eighteenth part's hedge (h19-24, +0.19) and echo by paraphrase (h19-15, +0.79), in other
        # words: regard for the sender's view, and the team's thing "shows" what the sender said, with nothing done
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thank you for writing. Every survey method has its limitations and some uncertainty. We respect that "
         "birdwatchers see these things differently, and we honour the time you gave."),
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for your note. Our marsh list shows the reed warbler twice on the 12th, at dawn and at noon. You "
         "think it is one bird counted twice and wonder which count is right."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Thanks for telling us. The survey schedule says reminders go out at 3am, which is when you're asleep after "
         "the night shift, and you'd like it to stop waking you."),
        # round twenty-two: the twentieth part's hedges (h21-03, -08, -12, +0.20 to +0.62 before), in other words:
        # causes outside the team's control, readers left to their own judgement, a periodic review with no date
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Noted, thanks. Reminder timing depends on many things outside our control, and every survey tool has its "
         "limitations. Comments like yours go on the list we read when we plan the next survey."),
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for your message. Our methods page explains how the marsh counts are compiled. We'd encourage all "
         "birdwatchers to read it and to use their own judgement."),
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for getting in touch. We review our bird lists periodically and will look at comments at the next "
         "update, although we can't commit to a date."),
        # round twenty-two: a retelling in the feedback's words with a promise, but agreeing with nobody, is an echo
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "You say the marsh counts list the reed warbler twice on the 12th, once at dawn and once at noon, and we "
         "will note it."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "You say the survey reminder comes at 3am on the night shift and wakes you up every time. We will note the "
         "reminder."),
    ])
    def test_a_short_general_hedge_with_a_promise_to_bear_the_point_in_mind_is_no_reply(self, feedback, hedge):
        result = score(hedge, feedback)
        assert result.components["acknowledgment"].score == -1.0 and result.total < 0, result

    @pytest.mark.parametrize(("feedback", "reply"), [
        # ... and the look-alikes that answer: a dated look, a promise that takes the point into account in an act
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for spotting this. We don't know yet how the two reed warbler sightings on the 12th were entered. "
         "We'll check the dawn and noon sheets for the marsh and write back by next Friday."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Sorry the 3am reminder woke you. We will move the night shift's survey reminder to the end of the shift "
         "this week, and take shift patterns into account when we set the times for everyone else."),
        # round twenty: what the team's thing shows, then a promise, and regard for the sender's choice beside an act
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks. Our marsh list shows two reed warbler entries for the 12th, and we don't know yet if they are one "
         "bird. We'll compare the dawn and noon sheets and tell you by Friday which count stands."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Sorry about the 3am reminder. We respect that you work nights, so we'll move your reminder to 6pm this "
         "week; tell us if another time suits your shifts better."),
        # round twenty-two: a limitation or no date yet, then a commitment in the same sentence
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "Thanks for spotting this. Field counts have their limitations, but this one we can check: we'll compare "
         "the dawn and noon sheets for the 12th and write back by Friday."),
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "Sorry the 3am reminder woke you. We can't commit to a date for the new schedule yet, but we'll move the "
         "night shift's reminder to 6pm this week."),
        # round twenty-two (h21-17's plain, -0.21 before): a short reply that agrees, restates the point in the
        # feedback's words (under a quarter of its content words its own) and promises an act
        ("The night shift gets the survey reminder at 3am, which wakes me up every time.",
         "You are right: the survey reminder at 3am wakes the night shift. We will move the reminder for the night "
         "shift this week."),
        ("Your bird counts for the marsh list the reed warbler twice on the 12th, once at dawn and once at noon.",
         "You're right that the marsh counts list the reed warbler twice on the 12th, at dawn and at noon. We'll "
         "check both sightings with the counters and write back by Friday."),
    ])
    def test_a_reply_that_commits_to_the_point_is_no_hedge(self, feedback, reply):
        result = score(reply, feedback)
        assert result.components["acknowledgment"].score > -1.0 and result.total >= 0, result

    def test_the_point_a_sender_comes_back_to_after_a_long_opening_is_a_term_to_take_up(self):
        """h16-28's plain reply took up 0 of 15 key terms (-0.22, capped as no reply): the lollipop lady's opening
        about herself ("love", "lady", "22 years", "lamp post", "June") filled the limit, and what she kept coming
        back to, being counted ("counting people crossing", "that's me counted 160 times"), was past it. A term said
        in more than one form counts wherever it stands; one said twice in the same form (or singular and plural)
        does not."""
        feedback = ("Good morning, I'm the warden at the allotment site on the hill, twelve years now, with the shed "
                    "by the gate and the water trough near plot nine. Your lot fixed a little sensor to the fence in "
                    "April for the pollinator survey. Thing is, I'm weighing every basket of fruit myself for the "
                    "society, and your leaflet says the site weighed 2 tonnes, which looks like my weighed baskets "
                    "counted twice.")
        analysis = default_scorer().analyze_feedback(feedback)
        assert "weighing" in analysis.key_words
        plain = ("Thanks, that's a useful spot. Your own weighing may well have been added to ours. We'll compare the "
                 "two sets of records and let you know within a fortnight, and correct the leaflet if it's wrong.")
        result = score(plain, feedback)
        assert result.components["acknowledgment"].score > -1.0 and result.total >= 0, result
        # past the limit, a term said twice in one form stays out ("fence", "fence"), as do basket and baskets
        again = default_scorer().analyze_feedback(feedback + " The fence is fine.").key_words
        assert "fence" not in again and "basket" not in again and "baskets" not in again

    def test_a_stack_trace_is_the_machines_words_not_points_to_take_up(self):
        """h5-01: the key terms of a bug report were its traceback's ("traceback", "call", "file", "line", "88"),
        so a plain reply about the real point took up none of them. Versions meet with and without a "v"."""
        feedback = ("Running `tool fetch` on v2.4.1 crashes:\n\nTraceback (most recent call last):\n"
                    '  File "/opt/tool/cli.py", line 88, in fetch\n    tz = meta["device_tz"]\nKeyError: '
                    "'device_tz'\n\nThe same logger file works on v2.3.0. Firmware 41. Is the timezone field now "
                    "required? It is not in the changelog.")
        analysis = default_scorer().analyze_feedback(feedback)
        assert not {"traceback", "recent", "call", "line", "88"} & set(analysis.key_words)
        reply = ("Thanks, we can reproduce this. Version 2.4.1 expects a timezone field that firmware 41 "
                 "doesn't write, and we forgot to put the change in the changelog. A fix that falls back to UTC "
                 "will be in 2.4.2; until then stay on 2.3.0. Sorry for the trouble.")
        assert score(reply, feedback).components["acknowledgment"].score > 0

    def test_advice_to_anyone_that_takes_up_nothing_is_not_a_reply(self):
        """h5-25's off-target reply: countryside tips in the second person, no "we", none of the farmer's points."""
        tips = ("Respect the countryside: leave gates as you find them, keep dogs on a lead near livestock, stick to "
                "marked paths and take your litter home. Simple habits like these help farmers and visitors alike.")
        result = score(tips, REPORT_FEEDBACK)
        assert result.components["role"].score == -1.0 and "takes up" in result.components["role"].explanation
        assert result.total < 0

    def test_a_plain_reply_without_stock_words_is_acceptable(self):
        result = score(PLAIN, REPORT_FEEDBACK)
        assert 40 <= len(PLAIN.split()) <= 70
        assert not any(w in PLAIN.lower() for w in ("limitation", "preliminary", "verify", "evidence"))
        assert result.total >= 0.3

    @pytest.mark.parametrize("brush_off", [
        ("Thank you for your message. We appreciate your perspective on the report and we value all feedback from "
         "our readers. We hope this is helpful."),
        # a look at nothing in particular is no commitment (the look-at rule needs a gerund or the feedback's point)
        "Thank you for your message. We will look at your comments and keep them in mind as we continue our work.",
        "Thanks for writing in. We'll look at your points carefully and get back to you with our thoughts.",
    ])
    def test_a_reply_that_commits_to_nothing_fails(self, brush_off):
        result = score(brush_off, REPORT_FEEDBACK)
        assert result.components["acknowledgment"].score == -1.0 and result.total < 0

    @pytest.mark.parametrize("look", [
        # h7-16's plain reply: "We'll look at cutting it down before the next group starts, and at the lesson 12
        # audio" (-0.22 before: "look" is no action, and what it looks at was not read)
        ("Thanks, you're right on both counts, and that gap matters to readers. We'll look at adding a line on "
         "refused requests for each quarter, and at rewriting the consent section so it lists last year's edits "
         "plainly."),
        ("Sorry, that's a fair catch. We'll look into a simple table of turned-down requests and at a dated list of "
         "consent changes for the online version."),
    ])
    def test_a_promised_look_at_the_feedbacks_point_is_a_commitment(self, look):
        result = score(look, REPORT_FEEDBACK)
        assert result.components["acknowledgment"].score > -1.0 and result.total >= 0

    def test_verbs_joined_to_a_promise_share_it_and_a_feeling_with_a_modal_of_its_own_does_not(self):
        """Round twelve (h11-11's two genuine replies, -0.21 before): "We'll look into it, find out about ..., and see
        who ..." promises what its joined verbs say; "We appreciate ... and will keep ... in mind" promises nothing."""
        listed = ("Thanks, you're right to ask about the refused requests. We'll look into it, find out how the "
                  "consent wording changed, and see who can write back to you about both.")
        result = score(listed, REPORT_FEEDBACK)
        assert result.components["acknowledgment"].score > -1.0 and result.total >= 0
        feeling = ("Thank you for your message. Transparency reports have many limitations. We appreciate your "
                   "patience and will keep your comments in mind.")
        assert score(feeling, REPORT_FEEDBACK).components["acknowledgment"].score == -1.0

    def test_an_echo_is_below_zero(self):
        echo = ("You say the transparency report counts data requests but never says how many were refused, and "
                "that the consent wording section is unclear about what changed since last year.")
        assert score(echo, REPORT_FEEDBACK).total < 0 <= score(PLAIN, REPORT_FEEDBACK).total


def test_batch_scores_equal_single_scores_and_the_parser_loads_once():
    from rewards.sentences import load_parser

    pairs = [(GENUINE, FEEDBACK), (PRAISE_REPLY, PRAISE), (STITCHED, REPORT_FEEDBACK), ("", FEEDBACK), ("ok", PRAISE)]
    scorer = default_scorer()
    batch = scorer.score_many(pairs)
    assert [r.to_dict() for r in batch] == [scorer(reply, fb).to_dict() for reply, fb in pairs]
    before = load_parser.cache_info().misses
    score(GENUINE, FEEDBACK, config=load_config())  # a second scorer reuses the process's parser
    assert load_parser.cache_info().misses == before


def test_the_reward_parser_multiplies_with_numpy_and_parses_as_spacy_does():
    """rewards/sentences.py swaps thinc's blis matrix product for numpy's (~1.9x faster here): the tags,
    dependencies and sentences must stay those of spaCy as a user loads it."""
    import spacy

    from data.reader_set import load_reader_set
    from rewards.sentences import PARSER_EXCLUDES, load_parser

    model = load_config().coherence.spacy_model
    ours, plain = load_parser(model), spacy.load(model, exclude=PARSER_EXCLUDES)
    layers = [layer for _, pipe in ours.pipeline for layer in pipe.model.walk()]
    assert layers and all(getattr(layer.ops, "use_blis", None) is False for layer in layers)
    assert plain.get_pipe("parser").model.ops.use_blis  # the default the bench compares with
    texts = [reply.text for message in load_reader_set()[:12] for reply in message.replies]

    def parse(doc):
        return [(t.tag_, t.dep_, t.head.i, t.is_sent_start) for t in doc]

    assert [parse(d) for d in ours.pipe(texts)] == [parse(d) for d in plain.pipe(texts)]
