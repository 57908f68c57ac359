"""The reward against the reader: pairwise agreement on the hand-written reader set (issue #12).

Dev is what the reward was tuned on (the twenty held-out parts read so far, h01-h24, h3-*, h4-*, h5-*, h6-*, h7-*,
h8-*, h9-*, h10-*, h11-*, h12-*, h13-*, h14-*, h15-*, h16-*, h17-*, h18-*, h19-*, h20-* and h21-*, are dev now: they
were read and tuned against). A
held-out part is written blind and read once before the round's changes; between two parts (the last retired, the next
not added yet) there is none and its test skips (docs/reward.md has every reading)."""

import pytest

from data.reader_set import GENUINE_KINDS, load_reader_set, pairwise_agreement
from rewards import default_scorer


def scored(split: str):
    messages = load_reader_set(split)
    results = iter(default_scorer().score_many([(r.text, m.feedback) for m in messages for r in m.replies]))
    return messages, [[next(results) for _ in m.replies] for m in messages]


def agreement(split: str):
    messages, results = scored(split)
    return pairwise_agreement(messages, [[r.total for r in rs] for rs in results])


@pytest.fixture(scope="module")
def dev_scored():
    return scored("dev")


@pytest.fixture(scope="module")
def dev(dev_scored):
    messages, results = dev_scored
    return pairwise_agreement(messages, [[r.total for r in rs] for rs in results])


def test_dev_agreement_and_signs(dev):
    assert dev.overall >= 0.991  # 0.992 with h9 (285 messages) before round ten, 0.995 after; 0.9945 with h10 (315)
    # before round eleven, 0.995 after; 0.9871 with h11 (345) before round twelve, 0.9900 after; 0.9869 with h12 (375)
    # before round thirteen, 0.9881 once a team member's "I'll" is the team, 0.9901 with explanations nobody asked for;
    # 0.9712 with h13 (405) before round fourteen, 0.9877 once a sign-off line is no unfinished sentence,
    # 0.9884 with thanks for the last part of a feedback's compound, 0.9886 with other people's question asked now;
    # 0.9765 with h14 (435) before round fifteen, 0.9879 once a sign-off in every layout is no unfinished sentence,
    # 0.9885 with a team member writing to someone else; 0.9857 with h15 (465) before round sixteen, 0.9879 once a
    # signature block of three short lines (closing, name, role) is no unfinished sentence, 0.9883 with the sender's
    # reading of a wording quoted back and a planned wording's content; 0.9856 with h16 (495) before round seventeen,
    # 0.9871 once in-role offers nobody asked for and texts for someone else are off target, 0.9876 with the point a
    # sender comes back to in other forms, 0.9878 with a look at the matter and what it found; 0.9832 with h17 (525)
    # before round eighteen, 0.9843 once a team's name alone and a role line with a comma are signatures, 0.9849 with
    # round eighteen's hype and assurance families; 0.9829 with h18 (555) before round nineteen, 0.9830 once a team's
    # name may have 'and' in it, 0.9832 with round nineteen's hype families, 0.9836 with short general hedges read as
    # no reply, 0.9838 with thanks for exact counts, 0.9841 with copy in capitals and lists' titles; 0.9819 with h19
    # (585) before round twenty, 0.9820 with titles in title case, 0.9823 with round twenty's hype families, 0.9842
    # with well-wishing closings, years given, a quantity before the thanked act and hype negated, 0.9864 once a
    # placeholder only in the sign-off costs less, 0.9866 with what a team's thing shows and regard read as no response;
    # 0.9853 with h20 (615) before round twenty-one, 0.9909 once a reply asked for something that neither answers nor
    # apologises, agrees or commits to anything fails the role gate, 0.9913 with round twenty-one's hype families, a
    # plan's steps after "1)" read as clauses under a list's title, and a FAQ page; 0.9909 with h21 (645) before round
    # twenty-two, 0.9915 after (the sender's own work called "your", a restatement that agrees and promises, thanks
    # for coverage, round twenty-two's hype, hedge and off-target families)
    assert dev.rate("salad", "careful") == 1.0  # the careful reply above keyword salad on every message (h8-21's
    # since the feedback's own figures are no uncited statistics; h13-02's since a sign-off line is no unfinished
    # sentence; h14-23's since a sign-off after a closing word on the last sentence's line is none either; h15's,
    # h16's, h17's and h18's 30 of 30; h19's 29 of 30 until round twenty read thanks for fifteen years with us as
    # thanks for taking part; h20's and h21's 30 of 30)
    assert dev.share_below_zero("placeholder") == 1.0
    assert dev.share_below_zero("oversold") >= 643 / 645  # 494 of 525 with h17 before round eighteen's families of
    # hype and assurance (doubt ruled out, "once and for all", correctness vouched for, "no ... whatsoever",
    # superlatives of trust, boundless confidence, emphatic reassurance): 505, two hits or more each; h18 added 27 of
    # 30 (532 of 555); round nineteen's reliability idioms, "100%" of a quality, records never lost, accuracy claimed
    # everywhere, "ever" superlatives, a future sworn for everyone, "every single": 551; h19 added 27 of 30 (578 of
    # 585); round twenty's certainty and ease idioms, cures and world-changing breakthroughs, analysis nothing slips
    # past, permanence guaranteed: 582 (h19-17, -21, -30, h16-16); h20 added 24 of 30 (606 of 615); round twenty-one's
    # standing in the world, newest technology, precision to the last unit, records without a single incident, every
    # rule complied with, power superlatives, success and change for all time: 612 (h20's six); h21 added 27 of 30
    # (639 of 645); round twenty-two's transformation, wonder, reach and standing families: 643 (h21's three, h4-18)
    assert dev.share_below_zero("hedge") >= 640 / 649  # 525 of 559 with h18 before round nineteen; 538 once a promise
    # to bear the point in mind with the point in the middle is evasive, and what a team's thing "reflects", what an
    # indirect question asks and what a relative clause says the team cannot do are no responses; h19 added 29 of 30
    # (567 of 589); round twenty's regard for the sender's view ("We respect that ...") as no response: 569 (h19-24,
    # h11-05); h20 added 26 of 30 (595 of 619); 610 once a reply asked for something that neither answers nor
    # apologises, agrees or commits to anything fails the role gate; h21 added 27 of 30 (637 of 649); round
    # twenty-two's causes outside the team's control, own judgement, periodic reviews: 640 (h21's three)
    assert dev.share_below_zero("off_target") >= 629 / 653  # 283 of 293 before round ten's checks of news about a
    # matter the sender did not raise, cheer to news of a death, a sender's own report, the team signing itself up and
    # an answer to someone else's comments, 290 after; h10 added 14 of 30 (304 of 323); round eleven's thanks for an
    # act the sender never did and topic words only in the names of the team's things: 316 (d49 and 11 of h10); h11
    # added 12 of 30 (in-role replies answering a neighbouring question in the message's own words); h12 added 23 of 30
    # (warm thanks, then an explanation nobody asked for); round thirteen's explanation nobody asked for, announced as
    # such: 359 (h11-18 and h12's seven); h13 added 20 of 30 (a neighbouring question answered unannounced); round
    # fourteen's other people's question in the present tense ("Plenty of people ask how ..."): 380 (h13-08); h14 added
    # 23 of 30 (403 of 443); h15 added 28 of 30 (431 of 473); h16 added 21 of 30 (452 of 503); round seventeen's
    # news said as the team's pleasure, events its studies run, notices to all, posts drafted for others, tip sheets
    # under a title and questions to a crowd: 461 (h16's nine); h17 added 25 of 30 (486 of 533); round eighteen's
    # what a study runs, named ("running short interviews"): 487 (h17-09); h18 added 27 of 30 (514 of 563); round
    # nineteen's copy that opens in capitals and lists' titles: 517 (h17-23, h18-02, h18-04); h19 added 28 of 30 (545
    # of 593); round twenty's safety question never taken up (h19-16) and titles in title case (h19-17): 547; h20
    # added 21 of 30 (568 of 623); round twenty-one's replies that, asked for something, neither answer nor apologise,
    # agree or commit the team to anything (how-to steps, tips, advice, an invitation, jargon: 30 of dev's 55 >= 0,
    # no genuine reply): 598; a FAQ page: 599; h21 added 27 of 30 (626 of 653); round twenty-two's requests without
    # a question mark ("worth a note", "need to know") and a results evening: 629 (h21's three)
    assert min(dev.rate(k) for k in dev.pairs if k != "invented") >= 0.98  # genuine above off-target 654 of 695 with
    # h13 before round fourteen (0.941), 668 once its careful replies' sign-off lines are read as signatures; 715 of
    # 755 with h14 before round fifteen (0.947), 725 once its genuine replies' sign-offs are read as signatures; 784
    # of 815 with h15 before round sixteen (0.962), 785 once a signature block of three lines is read as one; 836 of
    # 875 with h16 (0.955); 899 of 935 with h17 (0.961); 957 of 995 with h18 (0.962), 959 after round nineteen; 1016
    # of 1055 with h19 (0.963), 1020 after round twenty; 1075 of 1115 with h20 (0.964), 1096 after round twenty-one
    # (0.983); 1156 of 1175 with h21 (0.984)
    assert dev.rate("invented") >= 875 / 917  # 184 of 197 with h9 before round ten's flat causes and scheduled
    # outcomes, 190 of 197 after; 248 of 257 with h10, 249 after round eleven's changes stated as how things now are;
    # 303 of 317 with h11, 307 once its genuine misses are read right, 308 with work dated by a weekday or last week;
    # 364 of 377 with h12, 365 once h12-04's careful reply is read as the team's, 366 with a check's verdict after a
    # colon; 400 of 437 with h13, 420 once a sign-off line is no unfinished sentence, 421 with h13-16's thanks; 467 of
    # 497 with h14 before round fifteen, 479 once a sign-off in every layout is no unfinished sentence, 480 with a team
    # member writing to someone else; 530 of 557 with h15 before round sixteen, 534 once a signature block of three
    # lines is read as one, 535 with h15-13's careful reply read right; 585 of 617 with h16, 586 once h16-28's plain
    # reply takes up the count it answers, 587 with a look at the matter and what it found; 629 of 677 with h17, 631
    # after round eighteen; 680 of 737 with h18, 681 once h18-08's careful reply's sign-off is read as one; 733 of 797
    # with h19, 750 after round twenty (a placeholder only in the sign-off costs less: 214 genuine replies +0.10);
    # 804 of 857 with h20, 815 after round twenty-one; 872 of 917 with h21, 875 after round twenty-two
    assert dev.share_below_zero("invented") >= 283 / 457  # 53 of 127 before round eleven, 54 after; 62 of 157 with
    # h11 before round twelve, 65 after; 76 of 187 with h12 before round thirteen, 78 after; 86 of 217 with h13; 100 of
    # 247 with h14 before round fifteen, 101 with a delivery reported as under way (h7-07's "new sealed cables are in
    # the post"); 119 of 277 with h15; 136 of 307 with h16, 134 once a term said in more than one form counts past
    # the limit (h16-28's and h10-21's inventions take up the feedback's point, and report work as done once), 136
    # with a look at the matter and what it found in one sentence (h16-28's and h16-22's); 143 of 337 with h17; 159 of
    # 367 with h18; 167 of 397 with h19, 166 once a placeholder only in the sign-off costs less (h19-16's), 169 with a
    # consultation reported as held ("I've discussed your situation with our study doctor"); 184 of 427 with h20, 263
    # after round twenty-one (79 inventions that, asked for something, commit to nothing and own no problem); 279 of
    # 457 with h21, 283 after round twenty-two


def test_the_dev_salads_scored_acceptable_are_grammatical_nonsense_that_parses(dev_scored):
    """h4-20's salad ("Your son nine reads the app of integrity, soon. ... £20 keeps asking"), h5-08's and h5-20's
    ("the units will transparently boil the limitations") are well-formed to the parser and take up the feedback's
    terms; a syntax-based reward cannot tell them from sense (docs/reward.md). Every other salad of dev is below
    zero. Since round twenty-one h4-20's and h5-08's are below zero too: asked for something, they neither answer
    nor apologise, agree or commit the team to anything."""
    messages, results = dev_scored
    acceptable = [m.id for m, rs in zip(messages, results, strict=True)
                  for r, res in zip(m.replies, rs, strict=True) if r.kind == "salad" and res.total >= 0]
    assert acceptable == ["h5-20"]


def test_every_genuine_dev_reply_is_acceptable_unless_it_invents_a_contact_detail(dev_scored):
    """The second held-out part's writer (h3-*, dev now) gives the team's phone as <PHONE_1> in h3-07's two
    genuine replies. A reply can only have the feedback's placeholders filled back, so that one stays literal in
    what is sent: an invented contact detail, which fails the role gate (issue #12). That is the one reason a
    genuine dev reply may fail. (The team's own people and places as placeholders cost 0.2 instead.)"""
    messages, results = dev_scored
    failures = [(m.id, r.kind, res.components["role"].explanation) for m, rs in zip(messages, results, strict=True)
                for r, res in zip(m.replies, rs, strict=True)
                if r.kind in GENUINE_KINDS and not r.after_work and res.total < 0]
    # the seventh held-out part's three (dev since) pass since round nine: h8-21's careful (the feedback's own figures
    # are no uncited statistics), h8-02's (a reviewer's terms in whole sentences are not stitched), h8-01's plain (its
    # versions and "a gzipped file" take up the bug report; "we don't know the cause" is honest on receipt)
    # h9-15's careful passes since round ten (a complementiser read as a determiner, an infinitive passive: no breaks)
    # the tenth part's first reading (dev since) added four, which pass since round twelve: h11-11's two (verbs joined
    # to a promise), h11-23's plain (a verb after a gerund subject tagged a noun) and h11-26's plain (passing a
    # message on is writing in)
    # the eleventh part's first reading (dev since) added one, which passes since round thirteen: h12-04's careful, a
    # team member's "I don't know yet ..." and "I'll download it myself" read as the sender's experience retold
    # the twelfth part's first reading (dev since) added 27: 25 careful replies ending with a team member's sign-off on
    # a line of its own ("Amy, study researcher") read as a reply that ends mid-sentence (24 pass since round fourteen),
    # h13-16's plain (thanks "for the phone details" the feedback gives in "iPhone" and "telephone"; passes since round
    # fourteen) and h13-21's two ("Hello Hedgehog Class!", the name the class signs with, read as an invented name)
    # the thirteenth part's first reading (dev since) added 20: 6 careful and 14 plain replies ending with a sign-off on
    # the last sentence's line or after a closing word ("... by Friday. Sam, dashboard team", "Warmly, Claire") read
    # as a reply that ends mid-sentence; all pass since round fifteen (h14-21's plain, a team member "writing to the
    # council today", once no longer read as the sender's letter either)
    # the fourteenth part's first reading (dev since) added 7: 4 careful replies signing on three lines, a closing, a
    # name and a role ("With thanks,\nRuth\nCommunity history project"), read as a reply that ends mid-sentence (pass
    # since round sixteen), h15-13's careful (a quoted "guarantee" and a planned wording "that says what was found";
    # passes since round sixteen),
    # h15-05's plain (a dated promise not read as one) and h15-25's plain ("you're definitely not a fraud")
    # the fifteenth part's first reading (dev since) added 1: h16-28's plain, which passes since round seventeen (the
    # count it answers, said by the sender as 'counting' and 'counted' past the limit of 14 terms, is a term)
    # the sixteenth part's first reading (dev since) added 3: h17-20's careful (a team's name alone after a blank line)
    # and h17-30's (a name placeholder over a role line with a comma), read as sentences cut off, and h17-13's plain
    # (naming exactly what the sender asked for, read as an echo); the two careful ones pass since round eighteen
    # the seventeenth part's first reading (dev since) added 3: h18-08's careful (a sign-off block ending in a team's
    # name with 'and' in it, read as a sentence cut off), h18-13's careful (a team member's own email, read as an
    # invented contact) and h18-15's plain ('thanks for the exact counts', read as thanks for something not given);
    # h18-08's and h18-15's pass since round nineteen
    # the eighteenth part's first reading (dev since) added 5: h19-17's careful ('thank you for fifteen years with us',
    # read as thanks for something not said), h19-12's careful (a team after the signed name on the body's line, read
    # as a sentence cut off), h19-02's plain ('all the driving', read as thanks for something not said), h19-17's and
    # h19-18's plain (a name signed inline after 'Best wishes', read as a third person; "isn't clear-cut" as hype);
    # all pass since round twenty
    # the nineteenth part's first reading (dev since) added 1: h20-10's careful (a numbered plan, "Plan: 1) check ...",
    # read as label fragments), which passes since round twenty-one
    # the twentieth part's first reading (dev since) added 4: h21-25's careful and plain ('good luck with your diploma
    # work', the sender's own work, read as the team's work called 'your'), h21-17's plain (a short restatement that
    # commits, read as an echo) and h21-27's plain (thanks 'for featuring the squid', the sender's news in other words);
    # all pass since round twenty-two
    twelfth = [f for f in failures if f[0].startswith("h13-")]
    thirteenth = [f for f in failures if f[0].startswith("h14-")]
    fourteenth = [f for f in failures if f[0].startswith("h15-")]
    fifteenth = [f for f in failures if f[0].startswith("h16-")]
    sixteenth = [f for f in failures if f[0].startswith("h17-")]
    seventeenth = [f for f in failures if f[0].startswith("h18-")]
    eighteenth = [f for f in failures if f[0].startswith("h19-")]
    nineteenth = [f for f in failures if f[0].startswith("h20-")]
    twentieth = [f for f in failures if f[0].startswith("h21-")]
    later = (len(twelfth) + len(thirteenth) + len(fourteenth) + len(fifteenth) + len(sixteenth) + len(seventeenth)
             + len(eighteenth) + len(nineteenth) + len(twentieth))
    assert len(failures) - later <= 2, failures
    assert not thirteenth and len(twelfth) <= 2, failures
    assert len(fourteenth) <= 2 and not fifteenth and len(sixteenth) <= 1 and len(seventeenth) <= 1, failures
    assert not eighteenth and not nineteenth and not twentieth, failures
    assert all("is not in the feedback" in why for i, _, why in failures
               if not i.startswith(("h13-", "h15-", "h16-", "h17-", "h18-", "h19-", "h20-", "h21-"))), failures


def test_work_reported_as_done_scores_below_a_reply_drafted_on_receipt(dev):
    """133 of the 384 genuine replies report work as done or found ("we've fixed the link"): a reader who had not
    seen the reward marked them (docs/reader_set.md). From an agent drafting on receipt that work is invented.
    Before the reward counted it, they scored above the on-receipt genuine reply of their message in 17 of 21
    pairs (mean 0.778 against 0.746 for the on-receipt ones); now below it in 9 of 21 (0.676 against 0.744). The
    reward sees the work verbs of 55 of them (and of 3 of the 251 on-receipt replies); most still score >= 0 (128 of
    133): invented, but answers all the same."""
    lower, pairs = dev.after_work_below
    assert pairs == 25 and lower >= 11  # 21 until on-receipt plain replies joined d15 and d19 (both after-work)
    below, n = dev.below_zero["after_work"]
    assert n == 133 and below <= 5  # 2 until round eleven read "the abstract now says ..." as a change made (h03's
    # plain, +0.59 -> -0.05: three changes reported as done, invented on receipt); 3 until round thirteen read a
    # check's verdict after a colon as settled (d12's careful "We looked into it: the unsubscribe link was removing
    # people ...", h4-20's "I've checked: the vouchers for his school were never sent", +0.26 and +0.30 -> -0.45)


NO_HELDOUT = "no held-out rows: the last part is retired into dev, the next not added yet"


def test_heldout_agreement_and_signs():
    """The held-out part: the twenty-first (h22-*), written blind (given the kinds, the format, the on-receipt setting
    and the styles already used, asked for sign-offs in every layout and for bad kinds that vary from message to
    message) and read once, before any change made for it, on the reward after round twenty-three: agreement 0.979,
    genuine above invented 57/60, careful above salad 30/30, careful >= 0 30/30, plain >= 0 29/30, salad, placeholder
    and echo < 0 30/30, off-target and hedge < 0 28/30 each, oversold < 0 27/30, invented < 0 16/30. Floors at that
    reading (docs/reward.md). The twentieth (h21-*) is dev now (`heldout_v20`)."""
    if not load_reader_set("heldout"):
        pytest.skip(NO_HELDOUT)
    heldout = agreement("heldout")
    assert heldout.overall >= 0.978  # 0.979
    assert heldout.rate("invented") >= 0.95  # 57 of 60
    assert heldout.rate("salad", "careful") == 1.0 and heldout.share_below_zero("placeholder") == 1.0
    assert heldout.share_below_zero("careful") == 0 and heldout.share_below_zero("plain") <= 1 / 30
    assert heldout.share_below_zero("salad") == 1.0 and heldout.share_below_zero("off_target") >= 28 / 30
    assert heldout.share_below_zero("hedge") >= 28 / 30 and heldout.share_below_zero("oversold") >= 27 / 30
    assert heldout.share_below_zero("echo") == 1.0


@pytest.mark.xfail(strict=True, reason="issue #12 not met on the twenty-first held-out part: a plain reply < 0 (a key "
                                       "worker's careful question read as taken up in one term, the reply as "
                                       "cheerful) and 2 off-target replies >= 0 (a letter to the editor in the "
                                       "sender's voice; in role, the visit's logistics instead of the sessions asked "
                                       "about)")
def test_heldout_meets_the_issue_targets():
    if not load_reader_set("heldout"):
        pytest.skip(NO_HELDOUT)
    heldout = agreement("heldout")
    assert heldout.overall >= 0.95 and heldout.rate("salad", "careful") == 1.0
    assert all(heldout.share_below_zero(k) == 0 for k in GENUINE_KINDS)
    assert heldout.share_below_zero("salad") == heldout.share_below_zero("off_target") == 1.0


def assert_retired_part_meets_every_sign_target(dev_scored, origin: str) -> None:
    """Issue #12's sign targets on one retired part (30 messages, 270 replies): every genuine reply drafted on
    receipt >= 0, every salad, off-target and placeholder reply < 0."""
    messages, results = dev_scored
    part = [(r, res.total) for m, rs in zip(messages, results, strict=True) if m.origin == origin
            for r, res in zip(m.replies, rs, strict=True)]
    assert len(part) == 270
    assert all(total >= 0 for r, total in part if r.kind in GENUINE_KINDS and not r.after_work)
    assert all(total < 0 for r, total in part if r.kind in ("salad", "off_target", "placeholder"))


@pytest.mark.xfail(strict=True, reason="the seventh part's first reading (dev since) misses issue #12's sign "
                                       "targets: h8-22's off-target reply >= 0 (thanks for kind words the "
                                       "sender never wrote, about the survey they did name)")
def test_the_seventh_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v7")


def test_the_eighth_part_meets_every_sign_target(dev_scored):
    """The eighth part's first reading (dev since) missed issue #12's sign targets: careful h9-15 < 0 (the coherence
    gate) and 7 off-target replies >= 0. Round ten fixed both families on dev."""
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v8")


@pytest.mark.xfail(strict=True, reason="the ninth part's first reading (dev since) missed issue #12's sign targets "
                                       "with 16 off-target replies >= 0 (in-role replies about a neighbouring "
                                       "matter); 5 still are (h10-04, h10-10, h10-14, h10-24, h10-29)")
def test_the_ninth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v9")


@pytest.mark.xfail(strict=True, reason="the tenth part's first reading (dev since) missed issue #12's sign targets "
                                       "with 4 genuine replies < 0 (6 before the privacy gate's decimal fix; none "
                                       "since round twelve) and 18 off-target replies >= 0 (in-role replies answering "
                                       "a neighbouring question; 17 still are)")
def test_the_tenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v10")


def test_the_eleventh_part_meets_every_sign_target(dev_scored):
    """The eleventh part's first reading (dev since) missed issue #12's sign targets: careful h12-04 < 0 (the role gate
    read a team member's "I" as the sender) and 7 off-target replies >= 0 (warm thanks, then an explanation nobody
    asked for). Round thirteen fixed both families on dev."""
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v11")


@pytest.mark.xfail(strict=True, reason="the twelfth part's first reading (dev since) missed issue #12's sign targets "
                                       "with 27 genuine replies < 0 (25 careful ones ending with a team member's "
                                       "sign-off line read as an unfinished sentence, 24 fixed in round fourteen; "
                                       "h13-16's and h13-21's plain) and 10 off-target replies >= 0 (a neighbouring "
                                       "question answered unannounced)")
def test_the_twelfth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v12")


@pytest.mark.xfail(strict=True, reason="the thirteenth part's first reading (dev since) missed issue #12's sign "
                                       "targets with 20 genuine replies < 0 (6 careful and 14 plain ones ending with a "
                                       "sign-off on the last sentence's line or after a closing word, read as an "
                                       "unfinished sentence; none since round fifteen) and 7 off-target replies >= 0 "
                                       "(a neighbouring question answered, or an offer nobody asked for, unannounced; "
                                       "7 still are)")
def test_the_thirteenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v13")


@pytest.mark.xfail(strict=True, reason="the fourteenth part's first reading (dev since) missed issue #12's sign "
                                       "targets with 7 genuine replies < 0 (4 careful ones signing on three lines, "
                                       "closing, name and role, read as an unfinished sentence, none since round "
                                       "sixteen; h15-13's careful, which passes since, "
                                       "h15-05's and h15-25's plain) and 2 off-target replies >= 0 (an offer nobody "
                                       "asked for, in role)")
def test_the_fourteenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v14")


def test_the_fifteenth_part_meets_every_sign_target(dev_scored):
    """The fifteenth part's first reading (dev since) missed issue #12's sign targets: h16-28's plain reply < 0 (the
    count it answers was past the limit of key terms) and 9 off-target replies >= 0 (in role, offering or answering
    what nobody asked for, or tips, a chat post, a reminder and a Facebook post written for others). Round seventeen
    fixed both families on dev."""
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v15")


@pytest.mark.xfail(strict=True, reason="the sixteenth part's first reading (dev since) missed issue #12's sign "
                                       "targets with 2 careful replies < 0 (a team's name alone after a blank "
                                       "line, a name placeholder over a role line with a comma: read as sentences "
                                       "cut off; none since round eighteen), h17-13's plain < 0 (read as an echo) "
                                       "and 5 off-target replies >= 0 (in role, offering what nobody asked for; an "
                                       "advert for the sender; 4 still are)")
def test_the_sixteenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v16")


@pytest.mark.xfail(strict=True, reason="the seventeenth part's first reading (dev since) missed issue #12's sign "
                                       "targets with 2 careful replies < 0 (a sign-off block ending in a team's name "
                                       "with 'and' in it, read as a sentence cut off; a team member's own email read "
                                       "as an invented contact; one still is), h18-15's plain < 0 ('thanks for the "
                                       "exact counts'; passes since round nineteen) and 3 off-target replies >= 0 (an "
                                       "encyclopedia paragraph, a label written for the sender, tips; one still is)")
def test_the_seventeenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v17")


def test_the_eighteenth_part_meets_every_sign_target(dev_scored):
    """The eighteenth part's first reading (dev since) missed issue #12's sign targets: 2 careful replies < 0 (thanks
    for fifteen years read as thanks for something not said; a team after the signed name read as cut off), 3 plain
    < 0 ('all the driving'; a name signed inline read as a third person; "isn't clear-cut" read as hype) and 2
    off-target replies >= 0 (a reminder to a pregnant participant asking whether it is safe; a title-case press
    release). Round twenty fixed each family on dev."""
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v18")


@pytest.mark.xfail(strict=True, reason="the nineteenth part's first reading (dev since) missed issue #12's sign "
                                       "targets with a careful reply < 0 (a numbered plan read as label fragments; "
                                       "passes since round twenty-one) and 9 off-target replies >= 0 (in role, "
                                       "answering what nobody asked: how-to steps, tips, benefits advice, an appeal "
                                       "for money, an unrelated invitation, jargon to an Easy Read reader, a call for "
                                       "more specimens; a FAQ page; 2 still are: the appeal and the call)")
def test_the_nineteenth_part_meets_every_sign_target(dev_scored):
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v19")


def test_the_twentieth_part_meets_every_sign_target(dev_scored):
    """The twentieth part's first reading (dev since) missed issue #12's sign targets: a careful and 3 plain replies
    < 0 ('your diploma work' read as the team's work called 'your', a plain restatement read as an echo, thanks 'for
    featuring the squid' not read as the sender's own news) and 3 off-target replies >= 0 (in role, telling the
    sender about the project instead of answering). Round twenty-two fixed each family on dev."""
    assert_retired_part_meets_every_sign_target(dev_scored, "heldout_v20")
