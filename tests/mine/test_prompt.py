"""clean_prompt / message_words on commit messages shaped like real ones (simonw/llm, CPython,
Linux, Gerrit, GitLab, GitHub squash and merge commits)."""

from __future__ import annotations

import pytest

from pytest_homefield.mine import prompt, prompt_inline
from pytest_homefield.mine.prompt import clean_prompt, count_words, message_words, names_identifier


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param(
            "Fix default model options when constructing Prompt directly (#1663)",
            "Fix default model options when constructing Prompt directly",
            id="squash-suffix",
        ),
        pytest.param(
            "Keep tool parameters named title in generated input_schema, closes #1679 (#1680)",
            "Keep tool parameters named title in generated input_schema",
            id="closes-and-squash-suffix",
        ),
        pytest.param(
            "Fix AsyncResponse.log_to_db (#1668)\n\n"
            "* Fix async log_to_db\n* Preserve restored messages\n\n"
            "---------\n\n"
            "Co-authored-by: Jane Doe <jane@example.com>\n"
            "Co-authored-by: Bot <41898282+bot@users.noreply.github.com>",
            "Fix AsyncResponse.log_to_db\n\n* Fix async log_to_db\n* Preserve restored messages",
            id="github-squash-with-coauthors",
        ),
        pytest.param(
            "Merge pull request #45 from alice/feature-x\n\nAdd x to the CLI",
            "Add x to the CLI",
            id="github-merge-keeps-pr-title",
        ),
        pytest.param(
            "Merge branch 'feature' into 'main'\n\nAdd feature x\n\nSee merge request group/proj!123",
            "Add feature x",
            id="gitlab-merge",
        ),
        pytest.param(
            "gh-104584: Fix the optimizer (#104600)\n\n"
            "See https://github.com/python/cpython/issues/104584 for details.",
            "Fix the optimizer",
            id="cpython-gh-prefix",
        ),
        pytest.param(
            "Store response.json() on turns, closes #1565\n\nMerge PR #1586",
            "Store response.json() on turns",
            id="merge-pr-body-line",
        ),
        pytest.param(
            "Merge PR #1562: Log new message shapes to SQLite\n\nRefs #1314",
            "Log new message shapes to SQLite",
            id="merge-pr-title",
        ),
        pytest.param(
            "service_tier option for OpenAI models\n\nPR  #1585\n\n"
            "Three entries for PR #1586: the restored column.\n\nBased on #1571 by @someone.",
            "service_tier option for OpenAI models\n\nThree entries: the restored column.\n\n"
            "Based on #1571 by @someone.",  # the reference is part of the sentence (nu41): "Based by" was none
            id="pr-noun",
        ),
        pytest.param(
            "Changelog entry for #1574",
            "Changelog entry",
            id="preposition",
        ),
        pytest.param(
            "bpo-12345: Speed up json.dumps",
            "Speed up json.dumps",
            id="cpython-bpo-prefix",
        ),
        pytest.param(
            'Revert "Add foo (#12)"\n\nThis reverts commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b.',
            'Revert "Add foo"',
            id="revert",
        ),
        pytest.param(
            "net: fix skb leak on error\n\nThe skb was leaked when the queue was full.\n\n"
            'Fixes: 1234567890ab ("net: add the queue")\n'
            "Reported-by: Bob <bob@example.com>\n"
            "Signed-off-by: Alice <alice@example.com>",
            "net: fix skb leak on error\n\nThe skb was leaked when the queue was full.",
            id="linux-trailers",
        ),
        pytest.param(
            "Add retry to fetch\n\nRetries three times.\n\n"
            "Change-Id: I0123456789abcdef0123456789abcdef01234567\n"
            "Reviewed-on: https://review.example.org/c/12345\n"
            "Tested-by: CI Bot <ci@example.org>",
            "Add retry to fetch\n\nRetries three times.",
            id="gerrit-trailers",
        ),
        pytest.param(
            "Add y\n\nSome body text.\n\nCloses: #1\n\nSigned-off-by: A <a@b.c>",
            "Add y\n\nSome body text.",
            id="two-trailer-blocks",
        ),
        pytest.param(
            "Add y\n\nBody.\n\nFixes #34\nCloses #12\nRefs #5",
            "Add y\n\nBody.",
            id="closing-keyword-lines",
        ),
        pytest.param(
            "Fix thing\n\n(cherry picked from commit 0123456789abcdef0123456789abcdef01234567)",
            "Fix thing",
            id="cherry-pick",
        ),
        pytest.param(
            "Use [the docs](https://example.com/docs) and <https://a.example> here",
            "Use the docs and here",
            id="markdown-link-keeps-text",
        ),
        pytest.param(
            "Wrap reasoning traces in `<details>`\n\nExample: https://gist.github.com/x/abc\n\nCloses #1653",
            "Wrap reasoning traces in `<details>`\n\nExample",
            id="url-line",
        ),
        pytest.param(
            "fix: KeyError 'options_json' crash (#1656)\n\nRefs #5, #6 and GH-7; see simonw/llm#99.",
            "fix: KeyError 'options_json' crash",
            id="reference-lists",
        ),
        pytest.param(
            "Use the new API (see #12, #13 and #14).",
            "Use the new API.",
            id="parenthesised-see-list",
        ),
        pytest.param(
            "Merged in feature/x (pull request #12)\n\nAdd the thing",
            "Merged in feature/x\n\nAdd the thing",
            id="bitbucket-pull-request",
        ),
        pytest.param(
            "[#12] Tidy foo()\n\n- https://example.com/c\n- [x] done\n- [ ] todo (see #3)",
            "Tidy foo()\n\n- [x] done\n- [ ] todo",
            id="bullets-and-checkboxes",
        ),
        pytest.param(
            "Ajoute la prise en charge de « café » (#12)\n\nCorrige l'erreur — voir https://ex.fr/a_(b).",
            "Ajoute la prise en charge de « café »\n\nCorrige l'erreur — voir.",
            id="non-ascii-and-url-with-parentheses",
        ),
        pytest.param(
            "修复空列表时的崩溃 (#7)\n\n详见 https://example.cn/issue/7",
            "修复空列表时的崩溃\n\n详见",
            id="cjk",
        ),
        pytest.param(  # nu52, grantjenks/python-sortedcontainers 2b037039bb16: the prompt began "-- Stop"
            "Fix for issue #147 -- Stop caching dict methods using super\n\nStop caching -- fixes #12",
            "Stop caching dict methods using super\n\nStop caching",
            id="double-hyphen-separator",
        ),
        pytest.param(
            "Fix crash\r\n\r\nBody line\r\n\r\nSigned-off-by: A <a@b.c>\r\n",
            "Fix crash\n\nBody line",
            id="crlf",
        ),
    ],
)
def test_clean_prompt(message: str, expected: str) -> None:
    assert clean_prompt(message) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Broken since abc1234 landed", "Broken since landed"),
        ("Range 1a2b3c4..5d6e7f8 is bad", "Range is bad"),
        ("Regression introduced in commit 9fceb02d0ae598e95dc970b74767f19372d61af8.", "Regression introduced."),
        ("Id deadbeefcafe is twelve letters", "Id is twelve letters"),
        ("Follow-up to abc1234.\n\nReal text", "Real text"),
    ],
)
def test_shas_are_removed(message: str, expected: str) -> None:
    assert clean_prompt(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "The decade-old facade added beef to the cafe",  # hex-only words without digits
        "Accept effaced and acceded values",  # 7-letter hex words
        "Timeout is 1234567 ms or 1700000000000 ns",  # numbers are not shas
        "Colour #ff00aa and id 550e8400-e29b-41d4-a716-446655440000 stay",  # css colour, uuid
        "Parse 0xdeadbeef1 and v1.2.3",
        "Note: this paragraph stays",
    ],
)
def test_words_that_look_like_hex_are_kept(message: str) -> None:
    assert clean_prompt(message) == message


def test_lone_note_paragraph_is_not_a_trailer_block() -> None:
    message = "Fix parser\n\nNote: the old behaviour was wrong"
    assert clean_prompt(message) == message


def test_mixed_trailer_block_keeps_its_prose() -> None:
    # git's 25 % rule: one known trailer makes it a trailer block; the prose line is kept here
    assert clean_prompt("Add z\n\nThanks to Bob for the report\nSigned-off-by: A <a@b.c>") == (
        "Add z\n\nThanks to Bob for the report"
    )


def test_reference_trailer_with_prose_is_kept() -> None:
    message = "Add z\n\nFixes: crash on empty input\nWith more words here"
    assert clean_prompt(message) == message


def test_reference_trailer_with_prose_in_a_trailer_block_is_kept() -> None:
    assert clean_prompt("Add z\n\nFixes: crash on empty input\nSigned-off-by: A <a@b.c>") == (
        "Add z\n\nFixes: crash on empty input"
    )


def test_unchanged_lines_keep_their_spacing() -> None:
    message = "Fix `cache_key()` (#3)\n\n    code  block   stays\n\nrefs https://x.example/z"
    assert clean_prompt(message) == "Fix `cache_key()`\n\n    code  block   stays"


def test_blank_line_runs_collapse() -> None:
    assert clean_prompt("A b c\n\n\n\nhttps://x.example\n\n\n\nD e f\n\n\n") == "A b c\n\nD e f"


def test_falls_back_to_the_cleaned_subject() -> None:
    assert clean_prompt("Merge pull request #45 from alice/feature-x") == "Merge from alice/feature-x"
    assert clean_prompt("Merge pull request #45 from alice/x\n\nCo-authored-by: B <b@c.d>") == (
        "Merge from alice/x"
    )
    assert clean_prompt("Merge branch 'main' into dev\n\n# Conflicts:\n#\tllm/cli.py\n") == (
        "Merge branch 'main' into dev"
    )


def test_empty_only_when_the_subject_has_no_words() -> None:
    assert clean_prompt("") == ""
    assert clean_prompt("\n\n") == ""
    assert clean_prompt("#12") == ""
    assert clean_prompt("https://example.com/x") == ""


def test_message_words_ignores_trailers_refs_and_bullets() -> None:
    assert message_words("Fix AsyncResponse.log_to_db (#1668)") == 2
    assert message_words("Add x (#1)\n\n- \n- one\n\nCo-authored-by: A B <a@b.c>") == 3
    assert message_words("#12") == 0
    assert count_words("a - b — c") == 3


@pytest.mark.parametrize(("message", "names"), [
    ("Add subfactorial()", True),
    ("Add classify_unique", True),
    ("Add seekable.__getitem__", True),
    ("Fix `intword`", True),
    ("Use StreamEvent", True),
    ("Fix core (#12)", False),
    ("Update config", False),
    ("Add Latvian language localization", False),
    ("wip\n\nSigned-off-by: A_B <a_b@example.com>", False),  # trailers are not the prompt
])
def test_names_identifier(message: str, names: bool) -> None:
    assert names_identifier(message) is names


def test_hidden_tests_are_masked_in_the_prompt() -> None:
    """Issue 35: "Adds test_args2sh_sep" left the hidden test's id in the prompt (boltons). Its name,
    node id and file are masked; words that only resemble them are kept."""
    from pytest_homefield.mine.prompt import HIDDEN_TEST, HIDDEN_TEST_FILE, mask_hidden_tests

    ids = ["tests/test_cli.py::TestArgs::test_args2sh_sep[a-1]", "tests/test_cli.py::test_quote"]
    prompt = ("Adds test_args2sh_sep for args2sh\n\nSee tests/test_cli.py::TestArgs::test_args2sh_sep[a-1] in "
              "tests/test_cli.py (test_cli.py), `test_quote()` and TestArgs; test_quoted and cli.py stay.")
    text, masked = mask_hidden_tests(prompt, ids, ["tests/test_cli.py"])
    assert text == (f"Adds {HIDDEN_TEST} for args2sh\n\nSee {HIDDEN_TEST} in {HIDDEN_TEST_FILE} ({HIDDEN_TEST_FILE}), "
                    f"`{HIDDEN_TEST}()` and {HIDDEN_TEST}; test_quoted and cli.py stay.")
    assert masked == ["TestArgs", "test_args2sh_sep", "test_cli.py", "test_quote", "tests/test_cli.py",
                      "tests/test_cli.py::TestArgs::test_args2sh_sep[a-1]"]
    assert mask_hidden_tests("Fix the parser", ids, ["tests/test_cli.py"]) == ("Fix the parser", [])


def test_the_task_record_says_what_was_masked() -> None:
    from pytest_homefield.mine.message_score import message_fields
    from pytest_homefield.records import Task

    candidate = {"committed_at": "2026-01-01T00:00:00+00:00", "authored_at": "2026-01-01T00:00:00+00:00",
                 "subject": "Add neg() and test_neg", "message": "Add neg() and test_neg (#12)", "source_files": []}
    fields = message_fields(candidate, test_patch="", gold_patch="", hidden=["tests/test_m.py::test_neg"],
                            test_files=["tests/test_m.py"])
    assert fields["prompt"] == "Add neg() and <hidden test>" and fields["prompt_masked"] == ["test_neg"]
    assert fields["message"] == candidate["message"]  # the raw message is kept, never shown to an agent
    old = {"id": "a" * 12, "commit": "a" * 40, "parent": "b" * 40, **{k: v for k, v in fields.items()
                                                                    if k != "prompt_masked"},
           "test_files": [], "test_patch": "", "gold_patch": "", "FAIL_TO_PASS": [], "PASS_TO_PASS": []}
    assert Task.from_dict(old).prompt_masked == []  # records mined before still read


@pytest.mark.parametrize(("line", "expected"), [
    ("Fix parser \u2014 #12", "Fix parser"),  # a dangling dash at the end
    ("#12, fix the parser", "fix the parser"),  # a dangling separator at the start
    ("Fix\t\tthe  parser (#3)", "Fix the parser"),  # inner space runs
    ("See <https://example.com/a/b> and more", "and more"),
    ("Issue 1215: Add note", "Add note"),
    ("Bug #7: crash on empty input", "crash on empty input"),
    ("[docs](https://example.com/x) updated (#3)", "docs updated"),
    ("Thanks (, see #4)", "Thanks"),
    ("Fix x ( , #5 )", "Fix x"),
    ("Fix y ;; #6 ,", "Fix y"),
    ("Done :#7", "Done"),
    ("Use GH-12 and bpo-3 ideas", "Use GH-12 and bpo-3 ideas"),  # part of the sentence: kept (nu41)
    ("owner/repo!12 merged; done", "merged; done"),
    ("Revert 1a2b3c4d5e6f and deadbeef0", "Revert"),
    ("Fix \u2013 see https://x.y/z .", "Fix \u2013."),
    ("Fix the docs, cf. #3", "Fix the docs"),  # a keyword ending in "."
    ("Fixes:#12 for good", "for good"),
    ("Done, see also #5 and #6", "Done"),
    ("Add x (follow-up to #7)", "Add x"),
    ("Tweak (#8) and close #9", "Tweak and"),  # a bare item, then one after a keyword
])
def test_each_inline_rule_still_applies_where_it_can_match(line: str, expected: str) -> None:
    """Issue 35: each substitution of a cleaned line runs only where a substring test says its pattern can
    match; these lines need each of them (outputs as before the tests were added)."""
    assert clean_prompt(line) == expected


@pytest.mark.parametrize("line", [
    "Fix crash (#123)", "see https://example.com/x", "GH-12: fix", "bpo-3 follow-up", "group/project!12",
    "revert deadbeef1", "defaced 7 hex letters", "Issue 1215: Add note", "plain words only", "a - b", "x-1 y",
    "caf\u00e9 \u0661\u0662\u0663 #\u0661", "fix \x01\x01\x01\x01\x01\x01\x01 run",
])
def test_the_inline_precheck_never_changes_a_cleaning(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: :func:`prompt_inline._maybe_inline` only skips work: a line it lets through as is comes out of the
    full cleaning unchanged too."""
    fast = prompt.clean_prompt(line)
    prompt.clean_prompt.cache_clear()
    monkeypatch.setattr(prompt_inline, "_maybe_inline", lambda text: True)
    monkeypatch.setattr(prompt, "maybe_inline_anywhere", lambda text: True)
    assert prompt.clean_prompt(line) == fast
    prompt.clean_prompt.cache_clear()


@pytest.mark.parametrize("message", [
    "Fix the parser\n\nIt crashed on empty input.\n\nCo-authored-by: A <a@x>",
    "Merge PR #12: issue 5: fix the parser",  # the subject's end starts like "issue 5:" only once cut
    "Merge pull request #1 from a/b\n\nIssue 7: tidy the docs",
    "Tidy\n\n  gh 3: indented prefix\n- https://example.com/x",
    "Plain subject\r\nissue 12: after a CRLF",
    "Revert\n\nThis reverts commit 1a2b3c4d5e6f7a8b.\n\n(cherry picked from commit abcdef1)",
    "Fix x\n\n---\n\nSigned-off-by: B <b@y>",
    "caf\u00e9 d\u00e9caf\u00e9 \udcff 1234567 words",
    "Add subfactorial()\n\nSee #3",
    "Just prose\nover two lines\n\n\n\nand a third",
])
def test_the_message_wide_precheck_never_changes_a_cleaning(message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: :func:`prompt_inline.maybe_inline_anywhere` (no line of the message can need inline cleaning) only
    skips work: forcing every line through the per-line tests gives the same prompt."""
    _same_when_forced(monkeypatch, "maybe_inline_anywhere", message)


def _same_when_forced(monkeypatch: pytest.MonkeyPatch, precheck: str, message: str) -> None:
    """``clean_prompt(message)`` is the same with ``prompt.<precheck>`` letting every message through."""
    prompt.clean_prompt.cache_clear()
    fast = prompt.clean_prompt(message)
    prompt.clean_prompt.cache_clear()
    monkeypatch.setattr(prompt, precheck, lambda text: True)
    assert prompt.clean_prompt(message) == fast
    prompt.clean_prompt.cache_clear()


@pytest.mark.parametrize("line", [
    "Fix crash (#123)", "see https://example.com/x", "GH-12: fix", "revert deadbeef1", "Issue 1215: Add note",
    "  bug 7 is gone", "caf\u00e9 \u0661\u0662\u0663 #\u0661", "fix \x01\x01\x01\x01\x01\x01\x01 run",
    "x \udcff abc1234",
])
def test_the_message_wide_precheck_sees_every_line_the_line_one_lets_through(line: str) -> None:
    """Whatever line :func:`prompt_inline._maybe_inline` or the ``issue 12:`` precheck lets through, the message-wide
    test lets the message holding it through, wherever the line stands."""
    assert prompt_inline._maybe_inline(line) or prompt_inline._MAYBE_PREFIX_RE.match(line)
    for message in (line, f"Subject\n\n{line}", f"Subject\n\nprose\n{line}\nmore prose"):
        assert prompt_inline.maybe_inline_anywhere(message)
    assert not prompt_inline.maybe_inline_anywhere("Subject\n\nplain prose, decaf and 123456 beads")


@pytest.mark.parametrize("text", [
    "", "-", "- a", "a -", "—", "**bold** -- yes", "x\u00a0-\u00a0y", "\u3000-\u3000a", "a\x1c-\x1cb", "_", "é!",
    "!é", "!!a!!", "\t-\n-\r- z", "\u0661\u0662", "-\u0661", "a\u2028-", "x\u200b-", "(#) [ ] ...",
])
def test_count_words_counts_the_tokens_that_hold_a_word_character(text: str) -> None:
    """Issue 35: the two-pass count (tokens less the wordless ones) is the count of ``str.split`` tokens that
    hold a letter, digit or ``_``, whatever the whitespace or script (a guard: main counted the same way)."""
    assert count_words(text) == sum(any(c.isalnum() or c == "_" for c in tok) for tok in text.split())


@pytest.mark.parametrize("message", [
    "Fix x\n\nCo-authored-by: A <a@x>", "Fix x\n\nbranch : trunk", "--HG--\nbranch : trunk",
    "Fix x\n\nClo\u017fes: #1",  # a long s: "closes" to IGNORECASE
    "Fix x\n\nLin\u212a: https://x.y/z",  # the Kelvin sign: "link"
    "Fix x\n\nApproved-By: Q", "Fix x\n\n  Fixes : #3", "Fix x\n\n---\n\n***",
    "Fix x\n\n(cherry picked from commit abc1234)", "Merge branch 'a' into b\n\nTitle", "merge PR #4: Title",
    "Fix x\n\nSee merge request g/p!3", "Fix x\n\n[1]: https://a.b",
    "config: tidy\n\nexamples: more", "Fix x\n\n\n\n  indented\t\n\x0c\n", "Fix x\nThis reverts commit 1234567abc.",
])
def test_the_line_rule_precheck_never_changes_a_cleaning(message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 35: :func:`prompt._line_rules_may_apply` (no line of the message starts as steps 1-3 need) only
    skips work: forcing every message through those steps gives the same prompt."""
    _same_when_forced(monkeypatch, "_line_rules_may_apply", message)


def test_the_line_rule_precheck_sees_tokens_that_fold_to_a_rule_s() -> None:
    """A reference trailer spelt with characters that ``IGNORECASE`` folds to ASCII is still dropped."""
    assert prompt._line_rules_may_apply("Fix x\n\nClo\u017fes: #1")
    assert not prompt._line_rules_may_apply("config: tidy\n\nbranch : trunk\nplain prose")
    assert clean_prompt("Fix the parser\n\nClo\u017fes: #1") == "Fix the parser"


@pytest.mark.parametrize("line", [
    "Fix x (#12)", "a/b#3 and c#4 then d", "x-1 GH-12 y", "see #1, #2 and #3.", "owner/repo!12 x", "  (  #5 ) ",
    "abc1234...def5678 x", "caf\u00e9deadbeef1 and 1234567a", "a\u00a0#7\u00a0b", "#1#2#3", "-1-2 bpo-3!4",
    "word\tdeadbeefcafe\tword", "x/deadbeef1 1234567 abcdefabcdef",
])
def test_token_windows_substitute_as_the_whole_line_does(line: str) -> None:
    """Issue 35: the reference and sha patterns are tried only over the tokens from the first anchor to the
    last (:func:`prompt_inline._sub_tokens`), which gives what a substitution over the whole line gives."""
    pi = prompt_inline
    assert pi._sub_tokens(pi._REF_RE, pi._S, line, pi._MARK_DIGIT_RE.finditer(line)) == pi._REF_RE.sub(pi._S, line)
    assert pi._sub_tokens(pi._SHA_RE, pi._sha_repl, line, pi._hex_runs(line)) == pi._SHA_RE.sub(pi._sha_repl, line)


@pytest.mark.parametrize("line", [
    "Fix (\x00)", "closes \x00, \x00", "- [\x00] Fix", "x ,; \x00 y", "(see the pull request: \x00) z", "\x00: Fix",
    "Fix [a] then ( \x00 ) and (b) \x00", "a (the PR \x00 and \x00) b", "Tweak (\x00) and close \x00",
    "  * \x00 - done", "(x, \x00", "Merge PR \x00", "x ((\x00)) y", "list; \x00 / \x00 & \x00",
])
def test_the_sentinel_rules_apply_as_over_the_whole_line(line: str) -> None:
    """Issue 35: each sentinel rule tried only where it can match (:func:`prompt_inline._apply_sentinel_rules`) gives
    what the four substitutions over the whole line give."""
    whole = line
    for pattern, repl in prompt_inline._SENTINEL_RULES:
        whole = pattern.sub(repl, whole)
    assert prompt_inline._apply_sentinel_rules(line) == whole.replace(prompt_inline._S, "")


@pytest.mark.parametrize(("subject", "expected"), [
    # psf/requests subjects (nu41): the reference the sentence is about stays, the trailing PR number goes
    ("Port bpo-39057 to Requests (#7427)", "Port bpo-39057 to Requests"),
    ("Fix uri field in digest auth to include semicolons in path (GH-6990)",
     "Fix uri field in digest auth to include semicolons in path"),
    ("fix: handle double-digit IPv6 zone IDs in URL parsing (fixes #6808)",
     "fix: handle double-digit IPv6 zone IDs in URL parsing"),
    ("Fix #7564: raise FileNotFoundError for missing TLS material", "raise FileNotFoundError for missing TLS material"),
    ("Merge pull request #6897 from cjwatson/fix-test-certificates", "Merge from cjwatson/fix-test-certificates"),
    ("Handle GH-12 and GH-13 together (#14)", "Handle GH-12 and GH-13 together"),
    ("Fix x, see #12 and #13", "Fix x"),
    ("Document y, see #5 for details", "Document y"),
    ("fix #3902 Add proposed documentation change for post data", "Add proposed documentation change for post data"),
    ("Fixed #1630 and added test case.", "Fixed #1630 and added test case."),
])
def test_a_reference_that_is_part_of_the_sentence_stays(subject: str, expected: str) -> None:
    assert clean_prompt(subject) == expected


@pytest.mark.parametrize(("message", "expected"), [
    # ux63, martinblech/xmltodict: the link and "to" went, "(connected)" stayed, a word about nothing
    ("(connected to https://github.com/martinblech/xmltodict/issues/109) (#221)", ""),
    ("Parse attributes (connected to https://github.com/martinblech/xmltodict/issues/109) (#221)",
     "Parse attributes"),
    ("Fix bug in [reported in #12] parser", "Fix bug in parser"),
    # brackets with content of their own keep it
    ("Fix parser (thanks to Bob, see #3)", "Fix parser (thanks to Bob)"),
    ("Fix crash (regression in 2.0 from #12)", "Fix crash (regression in 2.0)"),
    ("Fix crash (Windows only)", "Fix crash (Windows only)"),
])
def test_a_bracket_left_with_one_word_about_a_removed_item_goes(message: str, expected: str) -> None:
    assert clean_prompt(message) == expected
