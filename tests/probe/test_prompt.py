"""The probe question and the gold added lines."""

from __future__ import annotations

from pytest_homefield.probe.prompt import added_lines, probe_prompt

PATCH = """diff --git a/calc.py b/calc.py
index 1111111..2222222 100644
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,5 @@
 def add(a, b):
-    return a - b
+    return a + b
+
+
+def mul(a, b): return a * b
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1,2 @@
 # calc
+++ more docs
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+X = 1
\\ No newline at end of file
"""


def test_added_lines_of_the_source_files_in_order() -> None:
    assert added_lines(PATCH, ["calc.py", "new.py"]) == "    return a + b\n\n\ndef mul(a, b): return a * b\nX = 1\n"
    # a line whose text starts with "++" is still an added line, not a header
    assert added_lines(PATCH, ["README.md"]) == "++ more docs\n"
    assert added_lines(PATCH).count("\n") == 6
    assert added_lines(PATCH, ["other.py"]) == ""


def test_prompt_has_message_and_files_but_no_code() -> None:
    text = probe_prompt("Fix add(): it subtracts\n", ["calc.py", "new.py"])
    assert "Commit message:\nFix add(): it subtracts\n" in text
    assert "Source files changed:\n- calc.py\n- new.py\n" in text
    assert "cannot see the repository" in text and "only the added lines" in text
    assert "a + b" not in text
