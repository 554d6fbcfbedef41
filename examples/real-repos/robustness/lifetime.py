"""SIGKILL / SIGINT of `homefield run -n 2` on a real repository, cmd: agents leaving children,
grandchildren and a setsid-escaped great-grandchild. Prints counts."""
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

repo, sig_name, sandbox = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
whole = sig_name == "SIGKILLALL"  # SIGKILL of the controller and of every xdist worker at once
sig = signal.SIGKILL if whole else getattr(signal, sig_name)
marker = f"hfspawn{uuid.uuid4().hex[:10]}"
until = time.time() + 45  # the first run's agents sleep until then; the resume's do not
code = (f"import os,sys,time\n"
        f"m='{marker}'\n"
        "if os.fork()==0:\n"
        "    if os.fork()==0:\n"
        "        os.setsid()\n"
        "        if os.fork()==0: time.sleep(120); os._exit(0)\n"
        "        time.sleep(120); os._exit(0)\n"
        "    time.sleep(120); os._exit(0)\n"
        f"time.sleep(max(0.0, {until} - time.time()))\n"
        "print('{\"cost_usd\": 0.01}')\n")
agent = f"spawn=cmd:python3 -c {shlex.quote(code)} {marker}"
tmp = Path(f"/tmp/hf-lifetime-tmp-{repo.name}-{sig_name}-{sandbox}")
shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir(parents=True)
env = dict(os.environ, TMPDIR=str(tmp))
run_id = f"k-{sig_name.lower()}-{sandbox}"
args = [sys.executable, "-m", "pytest_homefield.cli", "run", "--agent", agent, "--attempts", "1", "--max-tasks", os.environ.get("MAXT", "4"),
        "--run-id", run_id, "--sandbox", sandbox, "-n", "2"]

def stat(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None

def alive(pid):
    st = stat(pid); return st is not None and st[0] != "Z"

def tree(root):
    ch = {}
    for e in os.listdir("/proc"):
        if e.isdigit() and (st := stat(int(e))):
            ch.setdefault(int(st[1]), []).append(int(e))
    out, stack = set(), [root]
    while stack:
        for c in ch.get(stack.pop(), []):
            out.add(c); stack.append(c)
    return out

def marked():
    out = set()
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                if marker.encode() in open(f"/proc/{e}/cmdline", "rb").read():
                    out.add(int(e))
            except OSError:
                pass
    return {p for p in out if alive(p)}

t0 = time.monotonic()
proc = subprocess.Popen(args, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
while time.monotonic() - t0 < 200 and len(marked()) < 8:  # 2 workers x (agent + 3 left behind)
    time.sleep(0.1)
pids = tree(proc.pid) | marked()
n_marked = len(marked())
if whole:
    for p in tree(proc.pid):
        try:
            if b"sys.stdin.readline" in open(f"/proc/{p}/cmdline", "rb").read():
                os.kill(p, signal.SIGKILL)
        except OSError:
            pass
proc.send_signal(sig)
out, _ = proc.communicate(timeout=90)
time.sleep(1.0)
left = [p for p in pids if alive(p)]
left_marked = marked()
hf_after_kill = sorted(p.name for p in tmp.iterdir() if p.name.startswith("hf-"))
other = subprocess.run([sys.executable, "-m", "pytest_homefield.cli", "report", "r-none"], cwd=repo, env=env,
                       capture_output=True, text=True)  # any start of homefield... report does not sweep
hf_after_report = len([p for p in tmp.iterdir() if p.name.startswith("hf-")])
results = repo / ".homefield" / "runs" / run_id / "results.jsonl"
rec_after_kill = len(results.read_text().splitlines()) if results.exists() else 0
tail = [l for l in out.splitlines() if "resume" in l or "Interrupted" in l][-3:]
Path(f"/tmp/hf-lifetime-out-{repo.name}-{sig_name}-{sandbox}.txt").write_text(out)
t1 = time.monotonic()
res = subprocess.run(args + ["--resume"], cwd=repo, env=env, capture_output=True, text=True, timeout=900)
hf_after_resume = sorted(p.name for p in tmp.iterdir() if p.name.startswith("hf-"))
keys = [(r["task_id"], r["agent"], r["attempt"]) for r in map(json.loads, results.read_text().splitlines())]
time.sleep(0.5)
print(json.dumps({"repo": repo.name, "signal": sig_name, "sandbox": sandbox, "exit": proc.returncode,
                  "run_procs_before_kill": len(pids), "agent_procs_before_kill": n_marked,
                  "alive_1s_after": len(left), "agent_procs_alive_1s_after": len(left_marked),
                  "hf_dirs_after_kill": len(hf_after_kill), "hf_dirs_after_report": hf_after_report, "records_after_kill": rec_after_kill,
                  "hf_dirs_after_next_start": len(hf_after_resume), "resume_exit": res.returncode,
                  "resume_s": round(time.monotonic() - t1, 1), "keys": len(keys), "unique_keys": len(set(keys)),
                  "marked_after_resume": len(marked()), "last_lines": tail,
                  "resume_tail": [l for l in res.stdout.splitlines() if l.strip()][-2:]}, indent=1))
