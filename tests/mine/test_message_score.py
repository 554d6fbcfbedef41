"""spec_score / spec_breakdown: homefield's scale (reference §2.7) and the fixes of §9.6 item 1."""

from __future__ import annotations

import pytest

from pytest_homefield.mine.message_score import (
    WELL_SPECIFIED_THRESHOLD,
    is_well_specified,
    spec_breakdown,
    spec_score,
    unnamed_requirements,
)

# A task shaped like simonw/llm f947edd5d7 ("schema_dsl() ValueError for duplicate key names"), made
# into a new-API task: the gold patch adds ``parse_schema(spec, *, strict=False)`` and an error
# message; the hidden test imports and calls it and checks the message.
GOLD_PATCH = """\
diff --git a/llm/utils.py b/llm/utils.py
index 3f2a1b4..9c8d7e6 100644
--- a/llm/utils.py
+++ b/llm/utils.py
@@ -120,6 +120,18 @@ def schema_dsl(schema_dsl: str) -> dict:
     properties = {}
     required = []

+
+def parse_schema(spec: str, *, strict: bool = False) -> dict:
+    \"\"\"Parse a concise schema, rejecting duplicates when strict.\"\"\"
+    seen = set()
+    for name in spec.split(","):
+        key = name.strip()
+        if strict and key in seen:
+            raise ValueError(f"Duplicate key name: {key}")
+        seen.add(key)
+    return {"type": "object", "properties": {k: {} for k in seen}}
+
 def monotonic_ulid():
     return _ulid()
"""

TEST_PATCH = """\
diff --git a/tests/test_utils.py b/tests/test_utils.py
index 1a2b3c4..5d6e7f8 100644
--- a/tests/test_utils.py
+++ b/tests/test_utils.py
@@ -1,5 +1,13 @@
 import pytest
-from llm.utils import schema_dsl
+from llm.utils import parse_schema, schema_dsl


 def test_schema_dsl():
     assert schema_dsl("name")
+
+
+def test_parse_schema_rejects_duplicates():
+    assert parse_schema("a, b")["type"] == "object"
+    with pytest.raises(ValueError, match="Duplicate key name: a"):
+        parse_schema("a, a", strict=True)
"""

DETAILED_NAMING = (
    "Add parse_schema() with a strict option (#1616)\n\n"
    "parse_schema(spec, strict=True) should raise a ValueError with the message "
    '"Duplicate key name: <key>" when a key is repeated, instead of silently merging them.\n\n'
    "Co-authored-by: A <a@example.com>"
)
DETAILED_NOT_NAMING = (
    "Add a stricter schema parser (#1616)\n\n"
    "Parsing a schema in checking mode should raise an error when a key is repeated, "
    "instead of silently merging them.\n\n"
    "Co-authored-by: A <a@example.com>"
)


def score(message: str) -> float:
    return spec_score(message, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)


def test_threshold_matches_homefield() -> None:
    assert WELL_SPECIFIED_THRESHOLD == 0.5
    assert is_well_specified(0.5)
    assert is_well_specified(0.7)
    assert not is_well_specified(0.49)


@pytest.mark.parametrize("message", ["fix", "fix bug", "Fix bug (#12)", "wip\n\nSigned-off-by: A <a@b.c>"])
def test_vague_messages_score_low(message: str) -> None:
    # homefield's test E10: "fix" and "fix bug" are vague
    assert spec_score(message) < WELL_SPECIFIED_THRESHOLD
    assert score(message) < WELL_SPECIFIED_THRESHOLD


def test_homefield_e10_detailed_message_is_well_specified() -> None:
    message = (
        "Add `parse_date` helper\n\nParses ISO dates and returns None on empty input instead of "
        "raising.\n\nFixes #412"
    )
    assert spec_score(message) >= WELL_SPECIFIED_THRESHOLD


def test_vague_scores_below_detailed_naming_the_new_function() -> None:
    assert score("fix bug") < score(DETAILED_NAMING)
    assert is_well_specified(score(DETAILED_NAMING))


def test_not_naming_the_new_function_scores_lower() -> None:
    assert score(DETAILED_NOT_NAMING) < score(DETAILED_NAMING)
    assert not is_well_specified(score(DETAILED_NOT_NAMING))
    # without the patches the two messages look equally good: the drop comes from the hidden tests
    assert spec_score(DETAILED_NOT_NAMING) >= WELL_SPECIFIED_THRESHOLD


def test_breakdown_explains_the_drop() -> None:
    named = spec_breakdown(DETAILED_NAMING, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)
    unnamed = spec_breakdown(DETAILED_NOT_NAMING, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)
    assert set(named) == {"words", "names_code", "body", "behaviour", "new_api", "new_strings", "precise",
                          "housekeeping"}
    assert named["new_api"] == 0.0
    assert named["new_strings"] == pytest.approx(0.10)
    # required: parse_schema and strict; the message names neither
    assert unnamed["new_api"] == pytest.approx(-0.40)
    assert unnamed["new_strings"] < 0
    assert spec_score(DETAILED_NAMING, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH) == round(
        min(1.0, max(0.0, sum(named.values()))), 2
    )
    assert unnamed_requirements(DETAILED_NOT_NAMING, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH) == {
        "identifiers": ["parse_schema", "strict"],
        "strings": ["duplicate key name"],
    }
    assert unnamed_requirements(DETAILED_NAMING, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH) == {
        "identifiers": [],
        "strings": [],
    }


def test_penalty_is_proportional_to_the_fraction_unnamed() -> None:
    base = "Add a stricter schema parser\n\nIt should raise an error when a key is repeated."
    none = spec_breakdown(base, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)["new_api"]
    half = spec_breakdown(base + " Use parse_schema.", test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)
    assert none == pytest.approx(-0.40)
    assert half["new_api"] == pytest.approx(-0.20)


def test_identifier_parts_get_half_credit() -> None:
    parts = spec_breakdown("Add parse schema", test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)
    # parse_schema: half credit; strict: not named → unnamed 0.75 of 2
    assert parts["new_api"] == pytest.approx(-0.40 * 0.75)


def test_existing_names_are_not_required() -> None:
    # schema_dsl is imported by the hidden test but already existed (it is on a removed line)
    assert "schema_dsl" not in unnamed_requirements("x", test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)[
        "identifiers"
    ]


def test_trailers_do_not_count_as_body() -> None:
    # homefield counted "Co-authored-by" as an explanatory body
    assert spec_breakdown("Tidy the frobnicator\n\nCo-authored-by: A <a@b.c>")["body"] == 0.0


def test_squash_suffix_is_not_an_issue_link() -> None:
    # homefield gave +0.20 for "(#1663)"; here it changes nothing
    assert spec_score("Tidy up the loader for the settings page (#1663)") == spec_score(
        "Tidy up the loader for the settings page"
    )


def test_names_code_needs_a_name_from_the_patches() -> None:
    message = "Handle the the_widget_factory case in the loader"
    assert spec_breakdown(message)["names_code"] == 0.30  # no patches: homefield's lexical test
    with_patches = spec_breakdown(message, test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)
    assert with_patches["names_code"] == 0.0  # snake_case, but in neither patch
    assert spec_breakdown("Fix utils for keys", test_patch=TEST_PATCH, gold_patch=GOLD_PATCH)["names_code"] == 0.30


def test_capitalised_class_name_counts_only_with_patches() -> None:
    gold = (
        "diff --git a/llm/models.py b/llm/models.py\n--- a/llm/models.py\n+++ b/llm/models.py\n"
        "@@ -1,3 +1,3 @@ class Prompt:\n     def __init__(self):\n-        self.options = None\n"
        "+        self.options = {}\n"
    )
    message = "Fix default model options when constructing Prompt directly (#1663)"
    assert spec_breakdown(message)["names_code"] == 0.0
    assert spec_breakdown(message, gold_patch=gold)["names_code"] == 0.30


def test_scores_are_bounded_and_rounded() -> None:
    long = DETAILED_NAMING + "\n\nMore words " * 30
    for message in ["", "x", DETAILED_NAMING, DETAILED_NOT_NAMING, long]:
        value = score(message)
        assert 0.0 <= value <= 1.0
        assert value == round(value, 2)


def test_binary_and_odd_patches_do_not_break_parsing() -> None:
    binary = (
        "diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1111111\n"
        "GIT binary patch\nliteral 10\nRcmZ?wbhEHbWMp7q0000\n\nliteral 0\nHcmV?d00001\n\n"
    )
    assert 0.0 <= spec_score("Add image", test_patch=binary, gold_patch=binary + GOLD_PATCH) <= 1.0
    assert spec_score("Add image", test_patch="not a diff", gold_patch="+++\n@@ garbage") >= 0.0


def test_introduced_names_come_from_code_not_docs_locals_or_the_tests_themselves() -> None:
    gold = """\
diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1,4 +1,16 @@ class Loader:
     cache = None
+    retries = 3
+
+    def fetch(
+        self,
+        url: str,
+        timeout: float = 1.0,
+    ) -> bytes:
+        attempt = 0
+        return b""
+
+    def helper(self):
+        return 1
diff --git a/docs/usage.md b/docs/usage.md
--- a/docs/usage.md
+++ b/docs/usage.md
@@ -1,1 +1,3 @@
 # Usage
+    def lookup(name):
+        return name
"""
    test = """\
diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1,1 +1,9 @@
 from pkg.core import Loader
+def helper():
+    return 2
+
+def test_fetch():
+    attempt = helper()
+    assert Loader().fetch("u", timeout=2.0) == b""
+    assert Loader.retries == 3
+    assert lookup("x") and attempt
"""
    # fetch, timeout (multi-line def parameter) and retries (class attribute) are required;
    # attempt (a local), helper (the test defines its own) and lookup (a docs example) are not
    assert unnamed_requirements("Tidy", test_patch=test, gold_patch=gold)["identifiers"] == [
        "fetch",
        "retries",
        "timeout",
    ]
    named = "Add Loader.fetch(url, timeout=...) and a retries class attribute"
    assert unnamed_requirements(named, test_patch=test, gold_patch=gold)["identifiers"] == []


def test_module_level_assignment_after_a_function_hunk_header_is_introduced() -> None:
    gold = (
        "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n"
        "@@ -5,2 +5,4 @@ def old():\n     return 1\n+\n+DEFAULT_LIMIT = 10\n"
    )
    test = (
        "diff --git a/tests/test_mod.py b/tests/test_mod.py\n--- a/tests/test_mod.py\n+++ b/tests/test_mod.py\n"
        "@@ -1,1 +1,2 @@\n import pkg.mod\n+assert pkg.mod.DEFAULT_LIMIT == 10\n"
    )
    assert unnamed_requirements("Add a limit", test_patch=test, gold_patch=gold)["identifiers"] == ["DEFAULT_LIMIT"]


# issue 35 item 8: a prompt that names the changed code and states the behaviour is never vague
PRESERVE_GOLD = """\
diff --git a/pkg/table.py b/pkg/table.py
--- a/pkg/table.py
+++ b/pkg/table.py
@@ -10,6 +10,9 @@ class Table:
     def insert_all(self, rows, replace=False):
-        rows = list(rows)
+        rows = [dict(r) for r in rows]
+        if replace:
+            self._order = _keep_order(rows, "Column order preserved for {name}")
         return self._write(rows)
+
+def _keep_order(rows, note):
+    return [list(r) for r in rows]
"""
PRESERVE_TEST = """\
diff --git a/tests/test_table.py b/tests/test_table.py
--- a/tests/test_table.py
+++ b/tests/test_table.py
@@ -1,1 +1,6 @@
 from pkg.table import Table
+from pkg.table import _keep_order
+
+def test_insert_all_replace_keeps_order():
+    assert _keep_order([{"a": 1}], "Column order preserved for x") == [["a"]]
"""


def test_naming_the_changed_method_and_the_behaviour_is_never_vague() -> None:
    # the shape of the issue's example, once scored 0.0: the hidden tests need a helper and a string
    # the prompt never names, so the penalties alone would sink it
    prompt = "table.insert_all(replace=True) now preserves column order"
    parts = spec_breakdown(prompt, test_patch=PRESERVE_TEST, gold_patch=PRESERVE_GOLD)
    assert parts["new_api"] < 0 and parts["new_strings"] < 0
    assert parts["precise"] > 0
    score = spec_score(prompt, test_patch=PRESERVE_TEST, gold_patch=PRESERVE_GOLD)
    assert is_well_specified(score) and score == 0.5
    # a typo in code is a bug: newuser4's boltons "Fix issupserset typo in _ComplementSet comparisons"
    assert is_well_specified(spec_score("Fix insert_all typo that raised AttributeError", test_patch=PRESERVE_TEST,
                                        gold_patch=PRESERVE_GOLD))
    # a condition instead of a verb: "Fix insert_all for generator input"
    assert is_well_specified(spec_score("Fix insert_all for generator input", test_patch=PRESERVE_TEST,
                                        gold_patch=PRESERVE_GOLD))


@pytest.mark.parametrize("prompt", [
    "Update insert_all",  # names the code, states no behaviour
    "Update insert_all for Table",  # the condition's object is the changed name itself
    "Make the table code nicer",  # a behaviour-free sentence naming nothing that changed
    "Version 2.0.1 insert_all returns rows",  # a release subject is housekeeping
    "Get coverage of insert_all to 100%",  # tooling, not a behaviour
])
def test_prompts_without_a_named_change_and_a_behaviour_stay_vague(prompt: str) -> None:
    assert not is_well_specified(spec_score(prompt, test_patch=PRESERVE_TEST, gold_patch=PRESERVE_GOLD))


def test_adding_a_named_new_function_states_its_behaviour() -> None:
    gold = ("diff --git a/m/more.py b/m/more.py\n--- a/m/more.py\n+++ b/m/more.py\n"
            "@@ -1,1 +1,4 @@\n import math\n+\n+def subfactorial(n):\n+    return round(math.factorial(n) / math.e)\n")
    test = ("diff --git a/tests/test_more.py b/tests/test_more.py\n--- a/tests/test_more.py\n"
            "+++ b/tests/test_more.py\n@@ -1,1 +1,3 @@\n import m\n+def test_sub():\n"
            "+    assert m.subfactorial(4) == 9\n")
    assert is_well_specified(spec_score("Add subfactorial()", test_patch=test, gold_patch=gold))
    assert not is_well_specified(spec_score("Add a new tool", test_patch=test, gold_patch=gold))


def test_the_threshold_is_the_repositorys() -> None:
    message = "Tidy up the loader for the settings page"
    score = spec_score(message)
    assert not is_well_specified(score)
    assert is_well_specified(score, threshold=score)
    candidate = {"message": message, "subject": message, "committed_at": "", "authored_at": "",
                 "source_files": []}
    from pytest_homefield.mine.message_score import message_fields

    assert message_fields(candidate, test_patch="", gold_patch="")["well_specified"] is False
    assert message_fields(candidate, test_patch="", gold_patch="", threshold=0.2)["well_specified"] is True


# tkem/cachetools 43596b233710 "Fix #256: Deprecate MRUCache class." (nu30), its source hunk as it is and
# its test hunk cut to the new check: a class named after an acronym (MRUCache, TTLCache) is code, and
# deprecating the code the commit changes is a behaviour (a warning), as "warn" already was
MRU_GOLD = '''\
diff --git a/src/cachetools/__init__.py b/src/cachetools/__init__.py
--- a/src/cachetools/__init__.py
+++ b/src/cachetools/__init__.py
@@ -241,6 +241,10 @@ class MRUCache(Cache):
     """Most Recently Used (MRU) cache implementation."""

     def __init__(self, maxsize, getsizeof=None):
+        from warnings import warn
+
+        warn("MRUCache is deprecated", DeprecationWarning, stacklevel=2)
+
         Cache.__init__(self, maxsize, getsizeof)
         self.__order = collections.OrderedDict()
'''
MRU_TEST = '''\
diff --git a/tests/test_mru.py b/tests/test_mru.py
--- a/tests/test_mru.py
+++ b/tests/test_mru.py
@@ -1,3 +1,8 @@
 import unittest
+import warnings

 from cachetools import MRUCache
+
+def test_deprecated():
+    with warnings.catch_warnings(record=True) as w:
+        MRUCache(maxsize=1)
'''


def test_a_class_named_after_an_acronym_is_code_and_deprecating_it_a_behaviour() -> None:
    parts = spec_breakdown("Deprecate MRUCache class.", test_patch=MRU_TEST, gold_patch=MRU_GOLD)
    assert parts["names_code"] == 0.30  # was 0: "MRUCache" did not look like code
    assert is_well_specified(spec_score("Deprecate MRUCache class.", test_patch=MRU_TEST, gold_patch=MRU_GOLD))
    assert spec_breakdown("Change expiration in MRUCache", test_patch=MRU_TEST,
                          gold_patch=MRU_GOLD)["names_code"] == 0.30
    # an all-capitals word (an acronym alone) is no code name, and a name in neither patch counts for nothing
    assert spec_breakdown("Deprecate the MRU cache", test_patch=MRU_TEST, gold_patch=MRU_GOLD)["names_code"] == 0.0
    assert spec_breakdown("Deprecate LFUCache class.", test_patch=MRU_TEST, gold_patch=MRU_GOLD)["names_code"] == 0.0
    assert not is_well_specified(spec_score("Deprecate LFUCache class.", test_patch=MRU_TEST, gold_patch=MRU_GOLD))
