"""The prompt of a merge-mode task, composed from what the merge brought in (docs/contracts.md §6).

A merge commit's own message rarely says what the pull request did: ``Merge pull request #1097 from
rhettinger/concurrent_tee`` is two words once the reference is gone, ``Merge branch
'haukex-gray_product'`` none. The pull request's description is not in the history, but its commits
are. :func:`compose_merge_prompt` builds the prompt, in this order:

1. **The PR title**: what :func:`~pytest_homefield.mine.prompt.clean_prompt` keeps of the merge
   message (GitHub puts the title on the third line, under the generated subject; ``Merge PR #12:
   Title`` keeps ``Title``). A merge subject with no body contributes nothing.
2. **The merged branch's own commits** (``M^1..M^2``, oldest first, merge commits — such as merges of
   main into the branch — left out; :func:`branch_messages`), each cleaned like a commit message
   (trailers, shas, URLs and PR/issue references removed). Messages that are only noise
   (:data:`NOISE_RE`: "fix typo", "wip", "lint", "address review comments", ``fixup!`` …) and
   duplicates (case and white space folded, the title included) are left out; a commit whose subject
   repeats the title or an earlier subject contributes its body only.
3. **The branch name**, only when 1 and 2 gave nothing: ``concurrent_tee`` → ``concurrent tee``
   (separators ``_``, ``-``, ``/`` and ``.`` become spaces; a ``user/`` prefix of ``from user/branch``
   is dropped).

Paragraphs are joined by blank lines. The result is capped at :data:`MAX_PROMPT_CHARS`: commits that
would pass the cap are left out whole (the title always stays), and ``truncated`` says so. The
sources are recorded in the task record as ``prompt_sources``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_homefield.mine.prompt import clean_prompt

__all__ = ["MAX_PROMPT_CHARS", "NOISE_RE", "ComposedPrompt", "branch_name", "compose_merge_prompt",
           "branch_messages"]

#: The longest composed prompt, in characters (a long PR with 40 commits stays readable).
MAX_PROMPT_CHARS = 4000

#: Whole commit messages (cleaned, one line) that say nothing an agent can act on.
NOISE_RE = re.compile(
    r"^\W*(?:"
    r"(?:fix(?:e[sd])?|correct(?:ed)?)\s+(?:a\s+|some\s+|the\s+)?(?:typos?|spelling|whitespace|lint(?:ing)?|"
    r"formatting|tests?|ci|build|docs?|comments?|imports?)"
    r"|typos?|wip|tmp|temp|lint(?:ing)?|format(?:ting)?|reformat(?:ted)?|black|isort|ruff|flake8|mypy|"
    r"pre-commit(?:\s+fixes)?|style|cleanup|clean\s*up|tidy|nit(?:s|pick)?|oops|minor(?:\s+(?:fix|changes?))?|"
    r"(?:address(?:ed)?|apply|applied|incorporate[ds]?)\s+(?:(?:the|some|code)\s+)?(?:pr\s+)?"
    r"(?:review(?:er)?(?:\s+(?:comments?|feedback|suggestions?))?|suggestions?(?:\s+from\s+code\s+review)?|"
    r"comments?|feedback)"
    r"|review(?:\s+(?:comments?|feedback|fixes))?|update(?:d)?(?:\s+(?:branch|pr))?|more|again|"
    r"(?:fixup|squash|amend)!.*|merge.*|\.+|-+"
    r")\W*$",
    re.IGNORECASE,
)
_FOLD_RE = re.compile(r"\s+")
_GITHUB_FROM_RE = re.compile(r"^Merge (?:pull request|PR) #\d+ from (\S+)", re.IGNORECASE)
_BRANCH_RE = re.compile(r"^Merge (?:remote-tracking )?branch '([^']+)'", re.IGNORECASE)
_SEPARATORS_RE = re.compile(r"[_\-/.]+")


@dataclass
class ComposedPrompt:
    """A merge task's prompt and where it came from.

    ``sources`` is the record's ``prompt_sources``: ``{"title": bool, "commits": int (branch commit
    messages used), "noise": int (left out as noise or duplicates), "branch": bool (branch-name
    words used), "truncated": bool}``."""

    text: str
    sources: dict[str, Any] = field(default_factory=dict)


def branch_name(message: str) -> str:
    """The merged branch named in a generated merge subject (``Merge pull request #1 from user/b`` →
    ``b``, ``Merge branch 'b' into main`` → ``b``), or ``""``."""
    subject = message.split("\n", 1)[0].strip()
    m = _GITHUB_FROM_RE.match(subject)
    if m:
        return m.group(1).split("/", 1)[-1] if "/" in m.group(1) else m.group(1)
    m = _BRANCH_RE.match(subject)
    return m.group(1) if m else ""


def _fold(text: str) -> str:
    return _FOLD_RE.sub(" ", text).strip().lower()


def _merge_title(message: str) -> str:
    """The PR title of a merge message: its cleaned text when that is not just the cleaned subject
    of a generated merge line (``Merge branch 'x'`` cleans to nothing useful)."""
    subject = message.split("\n", 1)[0].strip()
    generated = bool(_GITHUB_FROM_RE.match(subject) or _BRANCH_RE.match(subject))
    body = message.split("\n", 1)[1].strip() if "\n" in message else ""
    if generated and not body:
        return ""
    return clean_prompt(message).strip()


def compose_merge_prompt(message: str, branch_commit_messages: Sequence[str]) -> ComposedPrompt:
    """Compose the prompt of a merge commit from its ``message`` and the raw messages of the merged
    branch's own commits (oldest first; see :func:`branch_messages`). Pure; the module docstring gives
    the rules. An empty ``text`` means nothing usable was found (the scan then drops the candidate as
    ``message_too_short``)."""
    title = _merge_title(message)
    seen = {_fold(title)} if title else set()
    parts = [title] if title else []
    used = noise = 0
    truncated = False
    size = len(title)
    for raw in branch_commit_messages:
        text = clean_prompt(raw).strip()
        subject, _, body = text.partition("\n")
        if body.strip() and _fold(subject) in seen:  # "Title" then a commit "Title\n\nwhy": keep the why
            text = body.strip()
        folded = _fold(text)
        if not text or folded in seen or NOISE_RE.match(folded):
            noise += 1
            continue
        seen.update((folded, _fold(subject)))
        if size + len(text) + 2 > MAX_PROMPT_CHARS:
            truncated = True
            continue
        parts.append(text)
        size += len(text) + 2
        used += 1
    from_branch = False
    if not parts:
        words = _SEPARATORS_RE.sub(" ", branch_name(message)).strip()
        if words:
            parts.append(words)
            from_branch = True
    return ComposedPrompt(
        text="\n\n".join(parts),
        sources={"title": bool(title), "commits": used, "noise": noise, "branch": from_branch,
                 "truncated": truncated},
    )


def branch_messages(git: Any, head: str, merges: Sequence[tuple[str, str]]) -> dict[str, list[str]]:
    """Raw messages of the commits each first-parent merge brought in (``M^1..M^2``), for ``merges``
    given as ``(merge sha, first parent sha)`` newest first and ``head`` a full commit sha,
    oldest first, merge commits left out: ``{merge sha: [message, …]}``.

    One ``git log`` for the whole scan, not one per merge: it lists every commit reachable from
    ``head`` but not from the first parent of the oldest merge, with parents. Walking the first-parent
    chain from ``head`` oldest merge first, a commit belongs to the first merge whose second (or
    later) parent reaches it without crossing the chain or a commit an older merge took: those are
    exactly the commits ``git log M^1..M^2`` lists, since everything an older mainline merge brought
    in is an ancestor of ``M^1``. ``git`` is a ``git.Repo().git`` command object; raises
    ``git.GitCommandError`` when git fails. A merge not on ``head``'s first-parent chain gets its own
    ``git log``."""
    if not merges:
        return {}
    parents: dict[str, list[str]] = {}
    messages: dict[str, str] = {}
    order: dict[str, int] = {}
    wanted = {merge for merge, _ in merges}
    out: str = git.log("-z", "--format=%H%x01%P%x01%B", head, "--not", merges[-1][1])
    for i, entry in enumerate(out.split("\x00")):
        if not entry.strip():
            continue
        commit, parent_list, message = entry.lstrip("\n").split("\x01", 2)
        parents[commit], messages[commit], order[commit] = parent_list.split(), message.strip("\n"), i
    chain: list[str] = []
    link: str | None = head
    while link is not None and link in parents:
        chain.append(link)
        link = parents[link][0] if parents[link] else None
    taken = set(chain)
    result: dict[str, list[str]] = {}
    for merge in reversed(chain):
        brought: list[str] = []
        stack = list(parents[merge][1:])
        while stack:
            commit = stack.pop()
            if commit in taken or commit not in parents:
                continue
            taken.add(commit)
            brought.append(commit)
            stack.extend(parents[commit])
        if merge in wanted:
            # git log lists newest first: a larger position is older
            result[merge] = [messages[c] for c in sorted(brought, key=order.__getitem__, reverse=True)
                             if len(parents[c]) < 2 and messages[c].strip()]
    for merge in wanted - result.keys():
        log: str = git.log("-z", "--reverse", "--no-merges", "--format=%B", f"{merge}^1..{merge}^2")
        result[merge] = [m.strip("\n") for m in log.split("\x00") if m.strip()]
    return result
