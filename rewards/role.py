"""Role and format: is this the research team replying to this person, ready to send?

A pretrained chat model writes fluent text in the wrong role: it edits or rewrites the feedback ("Here's a
suggested revision..."), writes as the sender (a complaint letter, a reminder signed with the sender's name),
lectures in general terms to nobody in particular, or leaves a template to fill ("Dear [Name]", "[Your
Name]"). Each of these fails the gate, whatever the other components say. So does a reply that invents
contact details: a link, or a governance placeholder (`<EMAIL_2>`) the feedback does not have. A
placeholder the feedback has is the sender's own redacted detail and may be used, also as a salutation
("Dear <PERSON_1>,"): the delivery step fills it back in.
"""

import re
from dataclasses import dataclass

from rewards.config import RoleConfig
from rewards.privacy import PLACEHOLDER
from rewards.sentences import FeedbackTerms, stem

# A capitalised name after a greeting or in a self-introduction (case matters: "I'm sorry" is not a name).
TITLE = r"(?:(?:Dr|Prof|Professor|Mr|Mrs|Ms|Mx)\.?\s+)?"
# The word after the name tells a person ("Dear Sarah,") from a group ("Dear Newsletter Team,").
GREETED_NAME = re.compile(r"^\W*(?:[Dd]ear|[Hh]i|[Hh]ello|[Hh]ey)\s+(?:there,?\s+)?" + TITLE
                          + r"\**([A-Z][a-z]+)\b\**[ \t]*(\w*)", re.MULTILINE)
SELF_NAME = re.compile(r"\b(?:I'm|I am|[Mm]y name is)\s+" + TITLE + r"([A-Z][a-z]+)\b[ \t]*(\w*)")
# Introducing oneself with a placeholder of the feedback is taking a name from it: the sender's, usually.
SELF_PLACEHOLDER = re.compile(r"\b(?:I'm|I am|[Mm]y name is|[Tt]his is)\s+" + TITLE + r"(<[A-Z]+_\d+>)")
# A byline ("Opinion, by Councillor <PERSON_1>:"): the text presents itself as that person's writing. Up to two
# capitalised words (a role or a title) between "by" and the placeholder; searched in a heading only.
BYLINE = re.compile(r"\b[Bb]y\s+(?:[A-Z][\w.-]*\s+){0,2}(<PERSON_\d+>)")
# A headline: a first line of three or more capitalised words (small words between them allowed), no end
# punctuation, then a blank line ("How a Think Tank Turned Good News Into a Crisis\n\n..."): an article.
SMALL_WORDS = r"(?:a|an|the|of|in|into|on|for|to|and|or|with|at|by|from|is)"
HEADLINE = re.compile(r"\A\W*(?!(?:Dear|Hi|Hello|Hey|Thanks|Thank)\b)"
                      r"(?:[A-Z0-9][\w'’-]*[ \t]+(?:" + SMALL_WORDS + r"[ \t]+)*){2,}[A-Z0-9][\w'’-]*[ \t]*\n[ \t]*\n")
# A reply that opens in capitals, three words or more, or two before a colon or "!" ("BREWED WITH THE HARDEST WATER IN
# THE VALLEY.", "SCIENCE SAYS: TALK YOUR WAY OUT!"): a slogan, a label or a press release, not a reply (13 off-target
# replies of the reader set, no other kind)
SHOUTED = re.compile(r"\A\W*(?:(?:[A-Z][A-Z0-9'’-]*[ \t]+){2,}[A-Z][A-Z0-9'’-]*\b|(?:[A-Z][A-Z0-9'’-]*[ \t]+)+"
                     r"[A-Z][A-Z0-9'’-]*[ \t]*[:!])")
# Round twenty: a reply that opens with a title in title case, three capitalised words or more (small words between
# allowed) up to a stop, a colon or "!" on the same line ("Cohort Study Celebrates 15 Years. This month ...", h19-17's
# press release; "Respect the Countryside Code: ..."), is a press release or a notice, not a reply; a greeting or
# thanks in title case ("Dear", "Hi", "Thank You", "Many Thanks", "Good Morning") is none (15 replies of the reader
# set, off-target and salad only)
TITLED = re.compile(r"\A\W*(?!(?:Dear|Hi|Hello|Hey|Thanks|Thank|Many|Warm|Kind|Good)\b)"
                    r"(?:[A-Z0-9][\w'’-]*[ \t]+(?:" + SMALL_WORDS + r"[ \t]+)*){2,}[A-Z0-9][\w'’-]*[.:!](?:[ \t]|$)",
                    re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
SENTENCE_STOP = re.compile(r"[.!?][\"'’”)]*(?=\s)")  # a sentence's stop before the next word or line
QUESTION = re.compile(r"[^.!?\n]*\?")  # a question of the feedback: the sentence up to its "?"
# A line that ends a sentence (a closing quote or bracket after the stop allowed), and the stop of an abbreviation
# that does not ("e.g.", "Dr.", "p.m.": a single letter or a title before the stop).
SENTENCE_CLOSED = re.compile(r"[.!?][\"'’”)]*$")
ABBREVIATION_END = re.compile(r"(?:(?<![A-Za-z])[A-Za-z]|\b(?:Dr|Mr|Mrs|Ms|Mx|Prof|vs|cf))\.$")
# A word that is no one's name: a contraction ("You're", "We'll", "It's"), a gerund ("Adjusting", "Leaving"), or a
# word with an ending of abstract nouns and adjectives ("Installation", "Measurement"; only some: "-ive" is Clive's)
CONTRACTION = re.compile(r"['’](?:s|re|ll|ve|d|t|m)$")
NOT_A_NAME = re.compile(CONTRACTION.pattern
                        + r"|^[A-Za-z]{3,}(?:ing|tion|sion|ment|ness|ics|ogy|ous|ful|less|able|ible|ism|ities|ings)s?$")
TITLES = frozenset({"Dr", "Prof", "Professor", "Mr", "Mrs", "Ms", "Mx"})
LOWER_CASE_WORD = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]*")
FIRST_PERSON_SINGULAR = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me)\b")
WORD = re.compile(r"[a-z][a-z'-]*")
OUR = re.compile(r"\bour\b")
THE_MATTER = re.compile(r"\b(?:it|this|that|these|those|them)\b")
# Where the name of what the sender is said to have asked about ends: "the end-of-study certificates and ...",
# "our sleep measurement approach so convincing"
MISREAD_STOP = frozenset({"and", "or", "but", "so", "with", "for", "from", "at", "by", "as", "is", "are", "was", "were",
                          "will", "would", "can", "could", "that", "which", "who", "it", "we", "you", "they", "very",
                          "too", "really", "on", "to", "of", "in", "about", "this", "the", "a", "an"})


# In what the reply thanks the sender for: the words that introduce the act's object, and those that start a clause
# of its own ("asking before relying on the figure", "writing when you could simply have closed the survey").
THANKED_INTRO = frozenset({"our", "your", "the", "this", "that", "these", "those", "its", "their", "a", "an", "of",
                           "on", "about", "to", "in", "into", "with", "over"})
THANKED_CLAUSE = frozenset({"and", "or", "but", "so", "as", "before", "after", "when", "while", "despite", "because",
                            "if", "since", "though", "although", "until", "which", "who", "that", "where", "how",
                            "what", "whether", "than", "rather", "by"})
# Round twenty: how much the sender did, before the thanked act ("for all the driving" to a volunteer driver, h19-02;
# "for both reports"): a quantity, not what was done, so the act is the word after it
THANKED_COUNT = frozenset({"all", "every", "each", "both"})
# ... and the years or months the sender has given the study, without saying of what ("for fifteen years with us" to a
# cohort member there "since 2009", h19-17; "for all these years in the study"): time given, thanks for taking part.
# "for three weeks of the money diary" names an act (h13-13's off-target)
TIME_GIVEN = re.compile(r"^(?:(?:your|all|the|these|those|so|many)\s+)*(?:[a-z]+(?:-[a-z]+)?\s+|\d+\s+)?"
                        r"(?:years|months|decades)\b(?!\s+of\b)")


def _words_pattern(terms: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class SenderFacts:
    """What the role check needs from the (redacted) feedback; computed once per feedback."""

    placeholders: frozenset[str]
    links: frozenset[str]
    team_nouns: frozenset[str]  # 5-letter stems of "your X" in the feedback: the team's things, to the sender
    signer: str | None  # the placeholder the feedback is signed with, if any
    stems: frozenset[str]  # 5-letter stems of the feedback's words
    body_stems: frozenset[str] = frozenset()  # the same without the feedback's own greeting line ("Dear colleagues,")
    collective: bool = False  # the sender speaks for several ("several of us")
    grave: bool = False  # the feedback tells of a death
    compounds: frozenset[str] = frozenset()  # the feedback's words of 7 letters or more ("iphone", "telephone")
    lower_case: frozenset[str] = frozenset()  # the feedback's words written in lower case: none is a name
    safety_question: str = ""  # the feedback's question whether something is safe for the sender, if it asks one
    asks: bool = False  # the feedback asks for something (a question, "please", "could you")
    covers: bool = False  # the sender tells of covering the team's work (a page, an article, a feature)
    apologises: bool = False  # the feedback apologises ("sorry", "my apologies")
    praise_only: bool = False  # the feedback is positive and raises nothing: no problem word, no "but", no question


class RoleCheck:
    def __init__(self, cfg: RoleConfig, stem_chars: int):
        self.cfg = cfg
        self.stem_chars = stem_chars
        self._template = re.compile(cfg.template_placeholder)
        self._link = re.compile(cfg.link, re.IGNORECASE)
        # The phrase patterns are written in lower case and matched on the lower-cased reply (faster than
        # IGNORECASE); the template and name patterns need the original case.
        self._assistant = re.compile("|".join(f"(?:{p})" for p in cfg.assistant_phrases), re.MULTILINE)
        self._header = re.compile(cfg.header_lines, re.MULTILINE)
        self._team = _words_pattern(cfg.team_voice)
        self._you = _words_pattern(cfg.second_person)
        self._sender = re.compile("|".join(f"(?:{p})" for p in cfg.sender_phrases))
        self._greeting = re.compile(r"^\W*(?:" + "|".join(re.escape(s) for s in cfg.greetings) + r")\b")
        self._salutation_words = frozenset(cfg.salutation_words)
        self._named_person = re.compile(cfg.named_person)
        self._not_person = frozenset(cfg.not_person_names) | frozenset(cfg.salutation_words)
        self._work_nouns = frozenset(cfg.work_nouns)
        self._own_work = re.compile(cfg.own_work)
        self._open_end = re.compile(cfg.open_end)
        self._named = frozenset(cfg.named_placeholders)
        self._group_greeting = re.compile(cfg.group_greeting)
        self._crowd_question = re.compile(cfg.crowd_question)
        self._collective = re.compile(cfg.collective_sender)
        self._misread = re.compile(cfg.misread_request)
        self._not_misread = self._work_nouns | frozenset(cfg.misread_generic)
        self._promotion = re.compile("|".join(f"(?:{p})" for p in cfg.promotion))
        self._thanks_for = re.compile(cfg.thanks_for)
        self._thanks_generic = frozenset(cfg.thanks_generic)
        self._passed_on = frozenset(cfg.thanks_passed_on)
        self._coverage_acts = frozenset(cfg.thanks_coverage)
        self._coverage = re.compile(cfg.coverage_context)
        self._apology = re.compile(cfg.apology)
        self._thanked_apology = re.compile(cfg.thanked_apology)
        self._courtesy = re.compile(cfg.courtesy_apology)
        self._problem_cues = re.compile(cfg.problem_cues)
        self._unasked = re.compile("|".join(f"(?:{p})" for p in cfg.unasked_explanation) or r"(?!)")
        self._grave = re.compile(cfg.grave_news)
        self._cheer = re.compile(cfg.cheer)
        self._safety_question = re.compile(cfg.safety_question)
        self._health_context = re.compile(cfg.health_context)
        self._safety_answer = re.compile(cfg.safety_answer)
        self._asks = re.compile(cfg.asks)
        self._engagement = re.compile(cfg.engagement)
        self._plural = _words_pattern(cfg.team_plural)
        self._own_report = re.compile(cfg.own_report)
        self._team_singular = re.compile(cfg.team_singular)
        self._signature_re = re.compile(cfg.signature_line)
        self._not_name = frozenset(cfg.signature_not_name)
        self._not_role = frozenset(cfg.signature_not_role)
        self._not_after_and = self._not_role | {"the", "a", "an"}  # "and the": a list cut off, not a team's name
        self._not_team_opener = self._not_name - {"the"}  # "The heat and health study team" is a team's name
        # a closing: one of `sign_offs` ("Cheers", "Warmly", "Yours sincerely") or a closing noun with its qualifiers
        # ("Warm regards", "With sincere thanks", "With respect and thanks"), perhaps "again" ("Thanks again")
        qualified = (r"(?:(?:" + "|".join(re.escape(q) for q in cfg.sign_off_qualifiers) + r")\s+)*(?:"
                     + "|".join(re.escape(n) for n in cfg.sign_off_nouns) + r")")
        phrases = sorted(cfg.sign_offs, key=len, reverse=True)  # the longest first: "yours sincerely", not "yours"
        self._sign_off = re.compile(r"^\W*(?:" + qualified + r"(?:\s+and\s+" + qualified + r")?|"
                                    + "|".join(re.escape(s) for s in phrases) + r")(?:\s+again)?\b", re.IGNORECASE)
        self._closing_rest = re.compile(cfg.sign_off_rest)
        self._block_lines = cfg.signature_block_lines

    def sender_facts(self, feedback: str, words: list[str], terms: FeedbackTerms, praising: bool) -> SenderFacts:
        """`praising`: the feedback's sentiment label (`common.sentiment`, governance's) is positive and it has a word
        of praise (tone's `praise_words`)."""
        mine = {stem(n, self.stem_chars) for n in terms.mine}
        team = frozenset(stem(n, self.stem_chars) for n in terms.yours) - mine
        tail = PLACEHOLDER.findall(feedback[-80:])
        signer = next((p for p in reversed(tail) if p.startswith("<PERSON")), None)
        links = frozenset(m.lower() for m in self._link.findall(feedback))
        lines = feedback.strip().split("\n", 1)
        body = lines[1] if len(lines) > 1 and self._greeting.match(lines[0].lower()) else feedback
        lower = feedback.lower()
        return SenderFacts(frozenset(PLACEHOLDER.findall(feedback)), links, team, signer,
                           frozenset(stem(w, self.stem_chars) for w in words),
                           frozenset(stem(w, self.stem_chars) for w in WORD.findall(body.lower())),
                           bool(self._collective.search(lower)), bool(self._grave.search(lower)),
                           frozenset(w for w in words if len(w) >= self.cfg.compound_min_chars),
                           frozenset(LOWER_CASE_WORD.findall(feedback)), self._asks_about_safety(lower),
                           bool(self._asks.search(lower)), bool(self._coverage.search(lower)),
                           bool(self._apology.search(lower)), praising and not self._problem_cues.search(lower))

    def check(self, reply: str, facts: SenderFacts, yours: frozenset[str] = frozenset(),
              takes_up_points: bool = True, covers_points: bool = True, taken_up: frozenset[str] | None = None,
              ours: frozenset[str] = frozenset()) -> tuple[bool, str]:
        """(passes, why). `yours`: the head nouns the reply calls "your ..." (from the parse); `takes_up_points`:
        the reply takes up at least half the feedback's terms it should (acknowledgment >= 0); `covers_points`: all
        it should (acknowledgment 1); `taken_up`: the stems of the feedback's key terms its own sentences take up
        (None: not known, the checks that need them are skipped); `ours`: the words naming the team's own things
        ("our vitamin D report"). Checks run cheapest first; the first failure is the explanation."""
        lower = reply.lower()
        if self._unfinished(reply, facts):
            last = reply.strip().splitlines()[-1].strip()
            return False, (f"Ends mid-sentence ('...{last[-40:]}'): an unfinished reply cannot be sent; say it in "
                           "fewer words.")
        if m := self._template.search(reply):
            return False, f"Unfilled template placeholder {m.group()!r}: write the reply itself, ready to send."
        invented = [p for p in self.unknown_placeholders(reply, facts) if _kind(p) not in self._named]
        if invented:
            return False, f"{invented[0]} is not in the feedback: do not invent contact details."
        links = [m for m in self._link.findall(reply) if m.lower() not in facts.links]
        if links:
            return False, f"Invented link {links[0]!r}: do not make up addresses or contact details."
        if m := self._assistant.search(lower):
            found = reply[m.start() : m.end()].strip()  # quoted as written
            return False, (f"Reads as an assistant talking about the feedback ({found!r}), not as the team replying to "
                           "the sender.")
        if m := self._header.search(lower):
            found = reply[m.start() : m.end()].strip()
            return False, f"Formatted as another kind of document ({found!r}), not as a reply."
        if m := HEADLINE.match(reply) or SHOUTED.match(reply) or TITLED.match(reply):
            return False, f"Opens with a headline ({m.group().strip()!r}): an article, not a reply."
        if m := self._sender.search(lower):
            found = reply[m.start() : m.end()]
            return False, f"Written as the sender ({found!r}): reply to them as the research team."
        if facts.signer and self._signed_by(reply, facts.signer):
            return False, f"Signed with the sender's name ({facts.signer}): the reply is from the team."
        if (m := self._byline(reply)) and m.group(1) in facts.placeholders:
            return False, f"Carries a byline of a person in the feedback ({m.group()!r}): the reply is from the team."
        if m := SELF_PLACEHOLDER.search(reply):
            return False, f"Introduces itself as {m.group(1)}, a name from the feedback: the reply is from the team."
        names = [name for name, after in (*GREETED_NAME.findall(reply), *SELF_NAME.findall(reply))
                 if name.lower() not in self._salutation_words and after.lower() not in self._salutation_words]
        names = names or self._named_inside(reply, facts)
        if names:
            return False, (f"Invents a name ({names[0]!r}): the feedback is redacted, so address the sender by its "
                           "placeholder or not at all, and do not make up who you are.")
        if group := self._greets_a_group(lower, facts):
            return False, (f"Greets {group!r}, not the person who wrote: a letter to someone else. Reply to the "
                           "sender.")
        if m := self._crowd_question.search(lower):
            return False, (f"Puts a question to a crowd ({reply[m.start() : m.end()].strip(' .!?')!r}): a post to a "
                           "group, not a reply to the sender.")
        if misread := self._misread_request(lower, facts, covers_points):
            return False, (f"Says the sender asked about, wanted or enjoyed {misread!r}, which the feedback does not "
                           "mention: a reply to another message.")
        if thanked := self._thanked_for_elsewhere(lower, facts):
            return False, (f"Thanks the sender for {thanked!r}, which the feedback does not mention: thanks for "
                           "something the sender never did, a reply to another message.")
        if thanked := self._thanked_apology_elsewhere(lower, facts):
            return False, (f"Thanks the sender for {thanked!r}, but the feedback apologises for nothing: thanks for "
                           "something the sender never did, a reply to another message.")
        if apology := self._apology_unasked(lower, facts):
            return False, (f"Apologises ({apology!r}) to a message that only praises and raises no problem: a reply "
                           "to another message.")
        if taken_up:
            acts = self._acts_elsewhere(lower, facts)
            # the feedback's terms it takes up besides naming the team's own things and the acts it thanks for
            rest = taken_up - {stem(w, self.stem_chars) for w in (*ours, *(w for a in acts for w in WORD.findall(a)))}
            if acts and len(rest) <= self.cfg.thanked_act_max_terms:
                return False, (f"Thanks the sender for {acts[0]!r}, which the feedback does not do or ask about, and "
                               f"takes up {len(rest)} of its specific terms besides: a reply to another message.")
            if not rest and len(taken_up) >= self.cfg.topic_only_min_terms:
                topic = list(dict.fromkeys(w for w in WORD.findall(lower) if stem(w, self.stem_chars) in taken_up))
                return False, (f"Takes up the feedback's words only to name the team's own things or what it thanks "
                               f"for ({', '.join(topic[:3])}): the topic, not what this sender wrote about it; answer "
                               "their point.")
        if m := self._unasked.search(lower):
            return False, (f"Announces an explanation nobody asked for ({reply[m.start() : m.end()]!r}): it answers "
                           "a question the sender did not ask instead of taking up theirs.")
        if facts.safety_question and not self._safety_answer.search(lower):
            return False, (f"Never takes up the sender's question whether it is safe ({facts.safety_question!r}): a "
                           "reply that leaves a safety question unanswered answers another message.")
        if facts.grave and (m := self._cheer.search(lower)):
            return False, (f"Answers news of a death with cheer ({reply[m.start() : m.end()]!r}): a reply to another "
                           "message.")
        if (m := self._promotion.search(lower)) and (not covers_points or self._news_elsewhere(lower, m, facts)):
            return False, (f"Promotes the team's news, events or studies ({reply[m.start() : m.end()]!r}) about a "
                           "matter the sender did not raise, or leaving out some of what they wrote about: a "
                           "newsletter, not a reply.")
        senders_own = {w for m in self._own_work.finditer(lower) for w in m.group(1).split()}  # "your diploma work"
        team_work = [n for n in yours if n in self._work_nouns and n not in senders_own]
        reversed_nouns = sorted(n for n in team_work if stem(n, self.stem_chars) in facts.team_nouns)
        if reversed_nouns:
            return False, (f"Calls the team's own work 'your {reversed_nouns[0]}', as the sender does: reply as the "
                           "team ('our ...').")
        if reported := self._a_senders_report(lower):
            return False, (f"Reports its writer's own doings ({reported!r}) without speaking for the team: a sender's "
                           "message, not the team's reply.")
        if self._copies_sender(lower, facts):
            return False, "Retells the sender's experience in the first person: reply to them instead of as them."
        if facts.asks and not self._engagement.search(lower):
            return False, ("Asked for something, it neither answers nor apologises, agrees or commits the team to "
                           "anything: advice, offers or news nobody asked for, a reply to another message.")
        if not self._team.search(lower):
            if not self._addresses_sender(lower):
                return False, ("Neither speaks as the team (we, I) nor opens by addressing the sender: this reads as "
                               "an article, not a reply.")
            if not takes_up_points:  # "Respect the Countryside Code: leave gates as you find them, ..."
                return False, ("Neither speaks as the team (we, I) nor takes up the sender's points: advice to anyone, "
                               "not a reply to this message.")
        return True, "Written as the team's reply to the sender (a gate: wrong role or template text caps the total)."

    def _asks_about_safety(self, lower: str) -> str:
        """The feedback's first question (a sentence ending in "?") whether something is safe for the sender ("is that
        safe?", "any side effects?") in a feedback about the sender's body or health, or ""."""
        if not self._health_context.search(lower):
            return ""
        for question in QUESTION.findall(lower):
            if self._safety_question.search(question):
                return question.strip()
        return ""

    def only_in_sign_off(self, reply: str, placeholders: list[str]) -> bool:
        """Each of `placeholders` is only in the reply's sign-off: the few words after its last finished sentence
        ("... by Friday. Best wishes, <PERSON_2>", "...\n\nWarm wishes,\n<PERSON_3>, Research Nurse")."""
        text = reply.rstrip()
        ends = [m.end() for m in SENTENCE_STOP.finditer(text)]
        if not ends:
            return False
        body, tail = text[: ends[-1]], text[ends[-1]:]
        return (len(tail.split()) <= self.cfg.signature_words + 4
                and all(p in tail and p not in body for p in placeholders))

    def unknown_placeholders(self, reply: str, facts: SenderFacts) -> list[str]:
        """Governance placeholders in the reply that the feedback does not have: nothing can fill them in."""
        return sorted(set(PLACEHOLDER.findall(reply)) - facts.placeholders)

    def unknown_named(self, reply: str, facts: SenderFacts) -> list[str]:
        """The unknown placeholders of a person, place or organisation ("<PERSON_2> from our team will phone you"):
        how readers write the team's own people and places, but a reply sent as written would show them."""
        return [p for p in self.unknown_placeholders(reply, facts) if _kind(p) in self._named]

    def _unfinished(self, reply: str, facts: SenderFacts) -> bool:
        """The last line stops on a word or a comma (a reply cut at the token limit), unless the reply ends with a
        signature (`_signed`)."""
        lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
        if not lines or not self._open_end.search(lines[-1]):
            return False
        return not self._signed(lines, facts.lower_case | frozenset(LOWER_CASE_WORD.findall(reply)))

    def _signed(self, lines: list[str], lower_case: frozenset[str]) -> bool:
        """The reply (its non-empty lines) ends with a sign-off, in any layout a reader accepts, not a sentence cut
        off. The sign-off is what follows the last finished sentence, on the same line ("... by Friday. Sam,
        dashboard team") or on a line of its own ("...by Friday.\n\nAmy, study researcher"): a closing alone
        ("Cheers"), a closing and then a signature ("Warmly, Claire", "With sincere thanks, the archive team",
        "Thanks again, Priya"), or a signature alone after a finished sentence or under a closing line ("Best,\nMaya",
        "Best wishes,\nThe digitisation team"). A signature is a name (a title allowed, or a placeholder) or "the ...
        team", with at most a role (`_signature`). What follows a closing must be a signature: "Thanks, we will" is a
        clause cut off. Without a closing, no word of the name is one the reply or the feedback writes in lower case
        (`lower_case`): "... your message. Data" is a sentence cut one word in, "... by Friday. Marta" a signature."""
        last = lines[-1]
        pieces = SENTENCE_END.split(last)
        # the sign-off starts after one of the last line's sentence ends (the last two, so that "Best, Dr. Maya Singh"
        # is read whole), or at the start of the line
        for k in range(len(pieces) - 1, max(0, len(pieces) - 3) - 1, -1):
            tail = " ".join(pieces[k:])
            before = pieces[k - 1] if k else (lines[-2] if len(lines) > 1 else "")
            if not before:
                return False
            after_sentence = self._finished(before)
            if (closing := self._sign_off.match(tail)) and (after_sentence or not k and self._closing_line(before)):
                rest = tail[closing.end():]
                if not rest.strip() or self._signature(rest[self._closing_rest.match(rest).end():]):
                    return True
            if self._signature(tail, lower_case) and (after_sentence or not k and self._closing_line(before)):
                return True
        # a signature block of up to `signature_block_lines` lines: a role on a line of its own under the name's line
        # ("With thanks,\nRuth\nCommunity history project", "Dr Amara Osei\nLookup maintainer") is read as the
        # name's role after a comma; a line that is a clause, a contact detail or a cut sentence is still no role
        if (self._block_lines >= 3 and len(lines) > 2 and len(pieces) == 1 and last.count(",") <= 1
                and "," not in lines[-2] and not self._finished(lines[-2])):
            # a role line with one comma ("Study lead, homing navigation project"): each part is a role
            return all(self._signed([*lines[:-2], f"{lines[-2]}, {part.strip()}"], lower_case)
                       for part in last.split(",") if part.strip())
        return False

    def _finished(self, text: str) -> bool:
        """`text` ends a sentence: a stop, not an abbreviation's ("e.g.", "Dr.", "p.m.")."""
        return bool(SENTENCE_CLOSED.search(text)) and not ABBREVIATION_END.search(text)

    def _closing_line(self, line: str) -> bool:
        """A line that ends with a closing, on its own or after the last sentence ("Best wishes,", "Many thanks
        for your patience,", "Best"), or with a comma ("With every good wish for the season,")."""
        tail = SENTENCE_END.split(line)[-1]
        return line.endswith(",") or bool((m := self._sign_off.match(tail))
                                           and self._closing_rest.fullmatch(tail[m.end():]))

    def _signature(self, text: str, lower_case: frozenset[str] = frozenset()) -> bool:
        """`text` is a signature: a name (up to three capitalised words, a title allowed, or a governance
        placeholder) or "the ... team", with at most a role (`role.signature_line`); the name does not start as a
        sentence does ("We", "Please", "Meanwhile", "Could", "You're", "Adjusting") nor has a word of `lower_case`
        (a word written in lower case elsewhere is no name: "Data"), and the role is no clause ("Sarah, we will look
        into the")."""
        if not (m := self._signature_re.match(text.strip())):
            return False
        name, role = m.group("name"), (m.group("role") or "").lower()
        if not name.startswith("<") and name.lower().endswith("team"):
            # a team's name ("Index team", named for its topic, which the reply may write in lower case: "the index is
            # built ..."; "Light and sleep study team"): its first word is no sentence's opener ("Our team"), nor is
            # another word a clause's ("Data will go to the team")
            if name.split()[0].lower() in self._not_team_opener or not self._role_words(name.lower().split()):
                return False
        elif not name.startswith("<"):
            words = [w for w in name.split() if w.rstrip(".") not in TITLES]
            if not words or words[0].lower() in self._not_name or any(NOT_A_NAME.search(w) or w.lower() in lower_case
                                                          for w in words):
                return False
        return self._role_words(WORD.findall(role))

    def _role_words(self, words: list[str]) -> bool:
        """The words of a role or a team's name are no clause's (`role.signature_not_role`), but for an "and" that
        joins two of its words ("Light and sleep study team", "Research and data manager"): a role that starts or
        stops on "and" is a list cut off ("and the", "sleep survey and")."""
        for k, w in enumerate(words):
            if w == "and" and 0 < k < len(words) - 1 and words[k + 1] not in self._not_after_and:
                continue
            if w in self._not_role or CONTRACTION.sub("", w) in self._not_role:
                return False
        return True

    def _named_inside(self, reply: str, facts: SenderFacts) -> list[str]:
        """Given names inside a sentence, after a word that puts a person there ("to Dave", "ask Priya"), that are
        none of the feedback's words, nor written in lower case, nor a day, a month, a language or a service."""
        names: list[str] = []
        lower_case: frozenset[str] | None = None
        for m in self._named_person.finditer(reply):
            name = m.group(1)
            low = name.lower()
            if (low in self._not_person or low in self._not_name or low in facts.lower_case or NOT_A_NAME.search(name)
                    or stem(low, self.stem_chars) in facts.stems):
                continue
            lower_case = lower_case if lower_case is not None else frozenset(LOWER_CASE_WORD.findall(reply))
            if low in lower_case:  # "the Report ... the report": a word, not a name
                continue
            names.append(name)
        return names

    def _greets_a_group(self, lower: str, facts: SenderFacts) -> str:
        """The greeting of the reply's first line, if it is to a group other than the sender ("dear parents")."""
        m = self._group_greeting.match(lower)
        if not m:
            return ""
        group = m.group().split()[-1]
        if group in ("all", "everyone", "everybody", "folks"):
            return "" if facts.collective else group
        return "" if stem(group, self.stem_chars) in facts.body_stems else group

    def _misread_request(self, lower: str, facts: SenderFacts, covers_points: bool) -> str:
        """What the reply says the sender asked about, was interested in or enjoyed, when the feedback does not name
        it: its first word or its head is none of the feedback's words (all of them, when the reply takes up the
        feedback's points in full)."""
        for m in self._misread.finditer(lower):
            words = m.group(1).split()
            for k, word in enumerate(words[1:], 1):  # the words that name it: up to the first small word
                if word in self._not_misread or word in MISREAD_STOP:
                    words = words[:k]
                    break
            if words[0] in self._not_misread:
                continue
            absent = [stem(w, self.stem_chars) not in facts.stems for w in words]
            # a name of two words or more, none of them the feedback's, is another message's whatever else the
            # reply takes up ("your question about the end-of-study certificates"); otherwise its first word or its
            # head (the last) not being the feedback's is, in a reply that leaves some of the feedback out
            if len(words) > 1 and all(absent):
                return m.group().strip()
            if not covers_points and (absent[0] or absent[-1]):
                return m.group().strip()
        return ""

    def _named_after(self, text: str) -> list[str]:
        """The words that name a thing at the start of `text`, after its determiners, up to the first small word:
        "a free workshop for independent retailers" -> ["free", "workshop"]."""
        words = WORD.findall(text)[:8]
        while words and words[0] in MISREAD_STOP:
            words = words[1:]
        for k, word in enumerate(words):
            if word in MISREAD_STOP:
                return words[:k]
        return words

    def _news_elsewhere(self, lower: str, m: re.Match, facts: SenderFacts) -> bool:
        """The news is about a matter the sender did not raise: none of the words naming what is announced, hosted
        or recruited for ("we are also hosting a free workshop", or the verb itself, "we are still recruiting") is
        the feedback's. A newsletter whatever else the reply takes up."""
        named = self._named_after(lower[m.end():]) or WORD.findall(m.group())[-1:]
        named = [w for w in named if len(w) > 2]
        return bool(named) and all(stem(w, self.stem_chars) not in facts.stems for w in named)

    def _thanked_for_elsewhere(self, lower: str, facts: SenderFacts) -> str:
        """What the reply thanks the sender for, when the thing it names is not in the feedback: "for the honest
        review of the ethics process and for checking our code" to a feature request. The act may be said in the
        reply's own words ("for spotting this", "for digging into the failure"), so only the objects of the act, the
        words after a determiner or a preposition that follows it, are looked up, and only when at least
        `thanked_absent_words` of them, none generic and none the feedback's, name it."""
        absent: list[str] = []
        found = ""
        for m in self._thanks_for.finditer(lower):
            for part in re.split(r"\s+and\s+for\s+", m.group(1)):
                objects = self._thanked_objects(part)
                if any(stem(w, self.stem_chars) in facts.stems for w in objects):
                    return ""
                if objects:
                    absent += objects
                    found = found or part.strip()
        return found if len(set(absent)) >= self.cfg.thanked_absent_words else ""

    def _thanked_apology_elsewhere(self, lower: str, facts: SenderFacts) -> str:
        """Thanks for an apology ("for apologising for the vague point", "for your apology") to a feedback that
        apologises for nothing."""
        if facts.apologises or "for" not in lower:
            return ""
        for m in self._thanks_for.finditer(lower):
            if self._thanked_apology.match(m.group(1)):
                return m.group(1).strip()
        return ""

    def _apology_unasked(self, lower: str, facts: SenderFacts) -> str:
        """An apology, not for the reply's own delay or length (`courtesy_apology`), to a feedback that only
        praises: what the rest of its sentence says ("sorry it didn't work as expected")."""
        if not facts.praise_only:
            return ""
        for m in self._apology.finditer(lower):
            rest = SENTENCE_STOP.split(lower[m.start():], maxsplit=1)[0]
            if not self._courtesy.search(rest):
                return rest.strip()[:60]
        return ""

    def _acts_elsewhere(self, lower: str, facts: SenderFacts) -> list[str]:
        """What the reply thanks the sender for, when it is an act the feedback does not do (its head is none of the
        feedback's words nor a generic act of writing in, `thanks_generic`: "for downloading the sleep study app",
        "for adopting a humpback", "for your donation") or is about the team's own thing ("for sharing our report",
        "for your interest in our pilot data"). An act done to "it" or "this" is the sender's on their own point
        ("for testing it", "for digging into this")."""
        acts = []
        for m in self._thanks_for.finditer(lower):
            part = m.group(1).strip()
            words = [w for w in WORD.findall(part)
                     if w not in THANKED_INTRO and w not in MISREAD_STOP and w not in THANKED_COUNT]
            if not words or THE_MATTER.search(part) or TIME_GIVEN.match(part):
                continue
            head = words[0].removesuffix("'s")
            covered = facts.covers and head in self._coverage_acts  # "for featuring the squid" to "a page on ..."
            if OUR.search(part) or (head not in self._thanks_generic and head not in self._passed_on and not covered
                                    and not self._feedback_act(head, facts)):
                acts.append(part)
        return acts

    def _feedback_act(self, head: str, facts: SenderFacts) -> bool:
        """The thanked act is one the feedback names: its word, the last part of one of its compounds ("the phone
        details" for "it's an iPhone SE", "the diary on the telephone"), or the verb of an "-ing" form ("testing" for
        "I tested")."""
        if stem(head, self.stem_chars) in facts.stems:
            return True
        if len(head) >= self.cfg.compound_part_min_chars and any(w.endswith(head) for w in facts.compounds):
            return True
        base = head[:-3] if head.endswith("ing") and len(head) > 6 else ""
        return bool(base) and any(s.startswith(base[: self.stem_chars]) for s in facts.stems)

    def _thanked_objects(self, part: str) -> list[str]:
        """The content words after the act's head that follow a determiner, possessive or preposition, up to a
        subordinate clause ("asking before relying on the figure": none): "the honest review of the ethics process"
        -> ["ethics", "process"], "checking our code" -> ["code"]."""
        head, objects, introduced = None, [], False
        for word in WORD.findall(part):
            if word in THANKED_CLAUSE and head is not None:
                break
            if word in THANKED_INTRO:
                introduced = head is not None
                continue
            if len(word) < 3 or word in MISREAD_STOP or (word in self._thanks_generic and head is None):
                continue
            if head is None:
                head = word
            elif introduced and word not in self._thanks_generic:
                objects.append(word)
        return objects

    def _byline(self, reply: str) -> re.Match | None:
        """ "by <PERSON_1>" in a short heading (the text up to the first colon or line break), not in a sentence
        ("the point raised by <PERSON_1>")."""
        heading = re.split(r"[:\n]", reply.strip(), maxsplit=1)[0]
        return BYLINE.search(heading) if len(heading.split()) <= self.cfg.signature_words + 2 else None

    def _addresses_sender(self, lower: str) -> bool:
        """A reply without "we" or "I" still opens by addressing the person: a greeting, thanks, or "you"."""
        opening = " ".join(lower.split()[: self.cfg.opening_words])
        return bool(self._you.search(opening) or self._greeting.match(lower))

    def _signed_by(self, reply: str, signer: str) -> bool:
        """The last line is the sender's name, alone or after a sign-off ("Kind regards, <PERSON_2>")."""
        lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
        last = SENTENCE_END.split(lines[-1])[-1] if lines else ""  # what follows the last sentence
        if signer in last and (len(last.split()) <= 2 or self._sign_off.match(last)):
            return True
        return False

    def _a_senders_report(self, lower: str) -> str:
        """What the writer did, in the first person singular ("I did another bean experiment", "I've tried
        re-projecting the layer myself"), in a reply that never speaks for the team (we, our, us): a message from
        someone in the sender's place, told `own_report_min` times, or once to nobody (no "you", no greeting or
        thanks)."""
        if self._plural.search(lower):
            return ""
        found = self._own_report.findall(lower)
        if len(found) >= self.cfg.own_report_min or (found and not self._you.search(lower)
                                                      and not self._addresses_sender(lower)):
            return found[0]
        return ""

    def _copies_sender(self, lower: str, facts: SenderFacts) -> bool:
        """Two or more first-person-singular sentences whose content words mostly come from the feedback. A sentence
        in which a team member promises or says they do not know yet (`team_singular`: "I'll re-run it myself", "I
        don't know yet why the 2019 file won't open") is the team's voice, not the sender's."""
        copied = 0
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", lower):
            if not FIRST_PERSON_SINGULAR.search(sentence) or self._team_singular.search(sentence):
                continue
            words = [w for w in WORD.findall(sentence) if len(w) > 3]
            if len(words) < 4:
                continue
            share = sum(stem(w, self.stem_chars) in facts.stems for w in words) / len(words)
            copied += share >= self.cfg.sender_copy_share
        return copied >= 2


def _kind(placeholder: str) -> str:
    """The kind of a placeholder: <PERSON_2> -> PERSON."""
    return placeholder[1:].rsplit("_", 1)[0]
