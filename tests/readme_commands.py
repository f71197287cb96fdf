#!/usr/bin/env python3
"""Every command in every README runs as written: extract them and check each one.

Extraction (from every git-tracked ``README.md``, at the top and in any directory):

* fenced code blocks (````` ``` ````` or ``~~~``) whose info string is ``sh``, ``bash``,
  ``shell`` or ``console``; a line ending with ``\\`` is joined with the next one; a leading
  ``$ `` prompt is dropped (in a ``console`` block that has prompts, the lines without one are
  output and are skipped); blank lines, whole-line comments and trailing `` # comment``\\ s
  (outside quotes) are dropped;
* in the top ``README.md`` only, the backticked spans of the Markdown table column headed
  ``command`` (the "Status and measured numbers" table). The first column of the "Using it"
  table is left out: it holds usage synopses with placeholders (``smpirun -platform P [-np N]
  ...``), not commands, and other tables hold no commands.

Every extracted command must have an entry in the registry, ``tests/readme_commands.toml``,
keyed by the README's path and the exact command text, which says how it is checked:

``run``
    run as written (``bash``, from the repository root or the entry's ``cwd``), within
    ``timeout`` seconds (default 120); it must exit 0. The ``cd DIR`` and ``VAR=value`` lines
    before it in the same code block are run first, as a reader pasting the block would.
    ``creates`` lists files it writes in the working tree (removed afterwards when they did not
    exist before); ``keeps`` lists tracked files or directories it rewrites, which must come
    out unchanged (they are restored either way).
``test``
    an automated test runs the same command: ``test = "file::function"`` (the file must exist
    and define or contain the function), or ``test = "file"`` with ``contains = "text"`` (the
    command text itself when ``contains`` is absent).
``long``
    too long for CI; ``why`` says why and ``check`` is a shell command (from the repository
    root, ``check_timeout`` default 120 s) that shows the command is still valid as written
    without running it in full; it must exit 0. The command's program (its first word after
    ``VAR=value`` prefixes and ``cd ... &&``) must exist in the repository or on ``PATH``.
``setup``
    installs packages or changes the machine; ``why`` is required and only the program is
    checked (it exists, or is a well-known system tool).

``needs`` (``run`` and ``long``) lists programs the command needs that a machine may lack
(SimGrid's ``/usr/bin/smpirun``, Open MPI's ``mpirun``): when one is missing the entry is
skipped with a message, as the end-to-end tests skip.

The checker fails (exit 1) when a README command has no entry, when an entry matches no README
command (stale), or when a check fails, naming the README and line of each; it ends with a
summary table. Runs of the checker on one machine are serialized (a lock in ``/tmp``), since
README commands write fixed paths such as ``/tmp/ring``.
"""

import argparse
import fcntl
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY = os.path.join("tests", "readme_commands.toml")
SHELL_INFO = {"sh", "bash", "shell", "console"}
KINDS = ("run", "test", "long", "setup")
DEFAULT_TIMEOUT = 120
KEYS = {
    "run": {"readme", "command", "kind", "timeout", "cwd", "creates", "keeps", "needs", "note"},
    "test": {"readme", "command", "kind", "test", "contains", "note"},
    "long": {"readme", "command", "kind", "why", "check", "check_timeout", "needs", "note"},
    "setup": {"readme", "command", "kind", "why", "note"},
}
# Programs a `setup` command may use without them being installed here.
SYSTEM_TOOLS = {"apt-get", "apt", "dpkg", "sudo", "sysctl", "rustup", "pip", "pip3", "curl",
                "wget", "systemctl", "modprobe", "ulimit", "echo", "tee", "useradd", "usermod"}
SHELL_BUILTINS = {"cd", "export", "set", "source", ".", "test", "[", "echo", "true", "false",
                  "unset", "ulimit", "read", "printf", "exec", "eval", "umask"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Command:
    readme: str
    line: int
    text: str
    prelude: list = field(default_factory=list)  # earlier `cd` / `VAR=value` lines of its block

    @property
    def where(self):
        return f"{self.readme}:{self.line}"


# ---------------------------------------------------------------------------- extraction

def strip_comment(s):
    """Drops a trailing ` # comment` that is outside quotes (and a whole-line comment)."""
    quote = None
    i = 0
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or s[i - 1] in " \t"):
            return s[:i].rstrip()
        i += 1
    return s.rstrip()


def is_prelude(text):
    """`cd DIR` or a bare `VAR=value` (the state a pasted block carries to its later lines)."""
    try:
        words = shlex.split(text)
    except ValueError:
        return False
    if not words:
        return False
    if words[0] == "cd" and len(words) <= 2 and "&&" not in text and ";" not in text:
        return True
    return all(ASSIGNMENT.match(w) for w in words)


def block_commands(readme, info, lines):
    """Commands of one fenced block; `lines` are (line number, text) pairs."""
    prompts = info == "console" and any(t.lstrip().startswith("$ ") for _, t in lines)
    out = []
    prelude = []
    pending = None  # (first line number, text so far) of a `\`-continued command
    for n, raw in lines:
        text = raw.rstrip()
        if pending is None:
            stripped = text.lstrip()
            if stripped.startswith("$ ") or stripped == "$":
                stripped = stripped[1:].lstrip()
            elif prompts:
                continue  # output in a console block
            if not stripped or stripped.startswith("#"):
                continue
            start, text = n, stripped
        else:
            start, text = pending[0], pending[1] + " " + text.lstrip()
            pending = None
        if text.endswith("\\") and not text.endswith("\\\\"):
            pending = (start, text[:-1].rstrip())
            continue
        cmd = strip_comment(text)
        if not cmd:
            continue
        out.append(Command(readme, start, cmd, list(prelude)))
        if is_prelude(cmd):
            prelude.append(cmd)
    if pending is not None:
        out.append(Command(readme, pending[0], strip_comment(pending[1]), list(prelude)))
    return out


FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


def split_row(line):
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", s)]


def table_commands(readme, numbered):
    """Backticked spans of the column headed `command` of the Markdown tables."""
    out = []
    i = 0
    while i + 1 < len(numbered):
        head, delim = numbered[i][1], numbered[i + 1][1]
        if head.lstrip().startswith("|") and re.match(r"^\s*\|?\s*:?-{3,}", delim):
            cols = [c.lower() for c in split_row(head)]
            i += 2
            while i < len(numbered) and numbered[i][1].lstrip().startswith("|"):
                if "command" in cols:
                    cells = split_row(numbered[i][1])
                    k = cols.index("command")
                    if k < len(cells):
                        for span in re.findall(r"`([^`]+)`", cells[k]):
                            out.append(Command(readme, numbered[i][0], span.strip()))
                i += 1
        else:
            i += 1
    return out


def extract(readme, text):
    commands = []
    outside = []  # lines outside code blocks (for the tables)
    fence = None  # (marker, info, lines) of the open block
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if fence is None:
            if m and not (m.group(2)[0] == "`" and "`" in m.group(3)):
                words = m.group(3).strip().split()
                fence = (m.group(2), words[0].lower() if words else "", [])
            else:
                outside.append((n, line))
        elif m and m.group(2)[0] == fence[0][0] and len(m.group(2)) >= len(fence[0]) \
                and not m.group(3).strip():
            if fence[1] in SHELL_INFO:
                commands += block_commands(readme, fence[1], fence[2])
            fence = None
        else:
            fence[2].append((n, line))
    if fence is not None and fence[1] in SHELL_INFO:
        commands += block_commands(readme, fence[1], fence[2])
    if readme == "README.md":
        commands += table_commands(readme, outside)
    return commands


def readmes():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    paths = [p for p in out.stdout.decode().split("\0") if p]
    return sorted((p for p in paths if os.path.basename(p) == "README.md"),
                  key=lambda p: (p.count("/"), p))


def all_commands(only=None):
    cmds = []
    for r in readmes():
        if only and r not in only:
            continue
        path = os.path.join(ROOT, r)
        if not os.path.exists(path):  # tracked but deleted in the working tree
            continue
        with open(path, encoding="utf-8") as f:
            cmds += extract(r, f.read())
    return cmds


# ---------------------------------------------------------------------------- checks

def program_of(text, prelude=()):
    """(program, directory it is relative to) of a command line."""
    cwd = ROOT
    for p in prelude:
        w = shlex.split(p)
        if w and w[0] == "cd" and len(w) == 2:
            cwd = os.path.normpath(os.path.join(cwd, w[1]))
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    while words:
        if ASSIGNMENT.match(words[0]):
            words.pop(0)
        elif words[0] == "cd" and len(words) > 2 and words[2] == "&&":
            cwd = os.path.normpath(os.path.join(cwd, words[1]))
            words = words[3:]
        elif words[0] in ("env", "time", "nice", "exec"):
            words.pop(0)
        else:
            break
    return (words[0] if words else None), cwd


def program_exists(prog, cwd):
    if prog is None:
        return True  # a bare assignment
    if prog in SHELL_BUILTINS:
        return True
    if "/" in prog:
        return os.path.exists(os.path.normpath(os.path.join(cwd, os.path.expanduser(prog))))
    return shutil.which(prog) is not None


def have(prog):
    return (os.path.exists(prog) if "/" in prog else shutil.which(prog) is not None)


def run_shell(script, cwd, timeout, verbose):
    """Runs `script` with bash in its own process group; (exit code or None on timeout, output)."""
    t0 = time.monotonic()
    p = subprocess.Popen(["bash", "-c", script], cwd=cwd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        code = None
    text = out.decode(errors="replace")
    if verbose:
        sys.stdout.write(text)
    return code, text, time.monotonic() - t0


def snapshot(paths):
    snap = {}
    for p in paths:
        full = os.path.join(ROOT, p)
        if os.path.isdir(full):
            for d, _, files in os.walk(full):
                for f in files:
                    q = os.path.join(d, f)
                    with open(q, "rb") as fh:
                        snap[q] = fh.read()
        elif os.path.exists(full):
            with open(full, "rb") as fh:
                snap[full] = fh.read()
    return snap


def restore(paths, before):
    """Puts `paths` back as in `before`; returns the files that had changed."""
    after = snapshot(paths)
    changed = []
    for q, data in before.items():
        if after.get(q) != data:
            changed.append(os.path.relpath(q, ROOT))
            os.makedirs(os.path.dirname(q), exist_ok=True)
            with open(q, "wb") as fh:
                fh.write(data)
    for q in after:
        if q not in before:
            changed.append(os.path.relpath(q, ROOT))
            os.remove(q)
    return changed


def tail(text, n=25):
    lines = text.rstrip().splitlines()
    return "\n".join("    | " + l for l in lines[-n:])


def check_registry_entry(e, i):
    """Problems with the shape of registry entry `e` (its index i)."""
    probs = []
    kind = e.get("kind")
    name = f"{REGISTRY} entry {i + 1} ({e.get('readme')}: {e.get('command')!r})"
    if kind not in KINDS:
        return [f"{name}: kind must be one of {', '.join(KINDS)}, not {kind!r}"]
    for k in ("readme", "command"):
        if not isinstance(e.get(k), str) or not e.get(k):
            probs.append(f"{name}: `{k}` missing")
    unknown = set(e) - KEYS[kind]
    if unknown:
        probs.append(f"{name}: unknown keys for kind {kind}: {', '.join(sorted(unknown))}")
    if kind in ("long", "setup") and not e.get("why"):
        probs.append(f"{name}: kind {kind} needs `why`")
    if kind == "long" and not e.get("check"):
        probs.append(f"{name}: kind long needs `check`")
    if kind == "test" and not e.get("test"):
        probs.append(f"{name}: kind test needs `test`")
    return probs


def check_test(e):
    spec = e["test"]
    if "::" in spec:
        path, func = spec.split("::", 1)
    else:
        path, func = spec, None
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        return f"test file {path} does not exist"
    with open(full, encoding="utf-8", errors="replace") as f:
        body = f.read()
    if func:
        pat = rf"\bfn\s+{re.escape(func)}\b" if path.endswith(".rs") else \
            rf"\b(def\s+)?{re.escape(func)}\b"
        if not re.search(pat, body):
            return f"{path} has no test function {func}"
        if e.get("contains") and e["contains"] not in body:
            return f"{path} does not contain {e['contains']!r}"
        return None
    needle = e.get("contains", e["command"])
    if needle not in body:
        return f"{path} does not contain {needle!r}"
    return None


def registry_lines(path):
    """(readme, command) -> line number of the entry's `command =` line in the registry."""
    out = {}
    readme = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            for k in ("readme", "command"):
                if line.startswith(k + " ="):
                    try:
                        v = tomllib.loads(line)[k]
                    except tomllib.TOMLDecodeError:
                        continue
                    if k == "readme":
                        readme = v
                    else:
                        out.setdefault((readme, v), n)
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Extract the shell commands of every README.md and check each one against "
                    f"{REGISTRY} (run it, find its test, or run its validity check).",
        epilog="Exit status: 0 all checked, 1 a command unregistered, a stale entry or a failed "
               "check, 2 a malformed registry.")
    ap.add_argument("--list", action="store_true",
                    help="print every extracted command with its README line and kind; check nothing")
    ap.add_argument("--no-run", action="store_true",
                    help="static checks only: registry coverage, tests, programs (runs no command "
                         "and no `check`)")
    ap.add_argument("--readme", action="append", metavar="PATH",
                    help="only this README (repeatable; stale entries of others are not reported)")
    ap.add_argument("--registry", default=os.path.join(ROOT, REGISTRY), help="registry file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command's output")
    a = ap.parse_args()

    cmds = all_commands(set(a.readme) if a.readme else None)
    try:
        with open(a.registry, "rb") as f:
            reg = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as err:
        print(f"{a.registry}: {err}", file=sys.stderr)
        return 2
    entries = reg.get("command", [])
    shape = [p for i, e in enumerate(entries) for p in check_registry_entry(e, i)]
    if shape:
        print("\n".join(shape), file=sys.stderr)
        return 2
    by_key = {}
    problems = []
    for e in entries:
        key = (e["readme"], e["command"])
        if key in by_key:
            problems.append(f"{REGISTRY}: {e['readme']}: {e['command']!r} is registered twice")
        by_key[key] = e

    if a.list:
        for c in cmds:
            e = by_key.get((c.readme, c.text))
            print(f"{c.where:32} {e['kind'] if e else 'UNREGISTERED':12} {c.text}")
        return 0

    lock = open(os.path.join("/tmp", "smpi-readme-commands.lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("readme_commands: another run holds /tmp/smpi-readme-commands.lock; waiting",
              flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)

    t_start = time.monotonic()
    stats = {}  # readme -> counters
    seen = set()
    done = {}  # key -> result of its first occurrence
    checks = {}  # check text -> its result
    for c in cmds:
        s = stats.setdefault(c.readme, dict(commands=0, run=0, test=0, long=0, setup=0,
                                            skipped=0, failures=0))
        s["commands"] += 1
        key = (c.readme, c.text)
        e = by_key.get(key)
        if e is None:
            problems.append(f"{c.where}: no entry in {REGISTRY} for: {c.text}")
            s["failures"] += 1
            continue
        seen.add(key)
        kind = e["kind"]
        s[kind] += 1
        if key in done:  # the same command twice in one README: checked once
            if done[key] is not None:
                s["failures"] += 1
            continue
        err = None
        skipped = None
        label = f"{c.where}: [{kind}] {c.text}"
        missing = [n for n in e.get("needs", []) if not have(n)]
        if kind == "test":
            err = check_test(e)
        elif kind == "setup":
            prog, cwd = program_of(c.text, c.prelude)
            if not (program_exists(prog, cwd) or prog in SYSTEM_TOOLS):
                err = f"program {prog} not found"
        elif missing:
            skipped = f"needs {', '.join(missing)}"
        elif kind == "long":
            prog, cwd = program_of(c.text, c.prelude)
            if not program_exists(prog, cwd):
                err = f"program {prog} not found (in the repository or on PATH)"
            elif not a.no_run:
                if e["check"] not in checks:  # one run per distinct check
                    checks[e["check"]] = run_shell(e["check"], ROOT,
                                                   e.get("check_timeout", DEFAULT_TIMEOUT), a.verbose)
                code, out, dt = checks[e["check"]]
                if code != 0:
                    err = (f"its check {e['check']!r} "
                           + ("timed out" if code is None else f"exited {code}") + f"\n{tail(out)}")
                else:
                    print(f"ok   {label}  (check {dt:.1f} s)", flush=True)
        elif kind == "run":
            prog, cwd = program_of(c.text, c.prelude)
            if a.no_run:
                if not program_exists(prog, cwd):
                    err = f"program {prog} not found"
            else:
                cwd = os.path.join(ROOT, e.get("cwd", "."))
                creates = [os.path.join(cwd, p) for p in e.get("creates", [])]
                fresh = [p for p in creates if not os.path.lexists(p)]
                keeps = e.get("keeps", [])
                before = snapshot(keeps)
                script = "set -e\n" + "".join(p + "\n" for p in c.prelude) + c.text + "\n"
                timeout = e.get("timeout", DEFAULT_TIMEOUT)
                print(f"...  {label}", flush=True)
                code, out, dt = run_shell(script, cwd, timeout, a.verbose)
                changed = restore(keeps, before)
                for p in fresh:
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p, ignore_errors=True)
                    elif os.path.lexists(p):
                        os.remove(p)
                if code != 0:
                    err = ("timed out after %d s" % timeout if code is None else f"exited {code}") \
                        + f" ({dt:.1f} s)\n{tail(out)}"
                elif changed:
                    err = "changed tracked files (restored): " + ", ".join(sorted(changed))
                else:
                    print(f"ok   {label}  ({dt:.1f} s)", flush=True)
        if skipped:
            s["skipped"] += 1
            print(f"skip {label}: {skipped}", flush=True)
        if err:
            s["failures"] += 1
            problems.append(f"{c.where}: [{kind}] {c.text}\n  {err}")
            print(f"FAIL {label}", flush=True)
        done[key] = err

    only = set(a.readme) if a.readme else None
    lines = registry_lines(a.registry)
    for key, e in by_key.items():
        if key not in seen and (only is None or key[0] in only):
            at = lines.get((key[0], key[1]), "")
            problems.append(f"{os.path.relpath(a.registry, ROOT)}:{at}: stale entry "
                            f"(no such command in {key[0]}): {key[1]}")

    rows = [("README", "commands", "run", "test", "long", "setup", "skipped", "failures")]
    tot = dict(commands=0, run=0, test=0, long=0, setup=0, skipped=0, failures=0)
    for r, s in stats.items():
        rows.append((r,) + tuple(str(s[k]) for k in tot))
        for k in tot:
            tot[k] += s[k]
    rows.append(("total",) + tuple(str(tot[k]) for k in tot))
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print()
    if problems:
        print(f"{len(problems)} problem(s):")
        for p in problems:
            print("- " + p)
        print()
    for j, r in enumerate(rows):
        print("| " + " | ".join(x.ljust(w[i]) if i == 0 else x.rjust(w[i])
                                for i, x in enumerate(r)) + " |")
        if j == 0:
            print("|" + "|".join("-" * (n + 2) for n in w) + "|")
    print(f"readme_commands: {tot['commands']} commands in {len(stats)} READMEs, "
          f"{len(problems)} problem(s), {time.monotonic() - t_start:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
