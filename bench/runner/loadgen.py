"""Load generators: wrk (keep-alive, or Connection: close for resumed
sessions) and siege (a new connection and a full handshake per request, as
in JSS's benchmark). Each run returns the client's view plus its own CPU
time, so a client-bound cell can be called out."""

import json
import os

import procs

WRK_LUA = r"""
-- prints one JSON line the runner parses; latencies in microseconds
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50_us":%d,"p99_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.mean))
end
"""


class Result:
    def __init__(self, requests, wall, errors, p50_ms=None, p99_ms=None, client_cpu=0.0, raw=None, cmd=None):
        self.requests = requests
        self.wall = wall
        self.errors = errors
        self.p50_ms = p50_ms
        self.p99_ms = p99_ms
        self.client_cpu = client_cpu
        self.raw = raw
        self.cmd = cmd


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def wrk(workdir, url, seconds, connections, close=False, timeout_s=10, env=None):
    """Keep-alive load with one wrk thread pinned to the client CPU. With
    close=True every request carries Connection: close, so wrk reconnects and
    resumes its TLS session. env: more environment (a client-side suite pin)."""
    lua = _write(os.path.join(workdir, "report.lua"), WRK_LUA)
    seconds = max(1, int(round(seconds)))  # wrk takes whole seconds
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", f"--timeout={timeout_s}s", "-s", lua]
    if close:
        cmd += ["-H", "Connection: close"]
    cmd.append(url)
    cmd = procs.pinned(procs.CLIENT_CPU, cmd)
    run = procs.ClientRun(cmd, timeout=seconds + timeout_s + 30, env=env)
    line = next((ln for ln in run.out.splitlines() if ln.startswith("{\"requests\"")), None)
    if run.rc != 0 or line is None:
        return Result(0, run.wall, {"client_failed": 1}, client_cpu=run.cpu,
                      raw=(run.out + run.err)[-2000:], cmd=cmd)
    d = json.loads(line)
    errors = {k: d[k] for k in ("connect", "read", "write", "status", "timeout") if d[k]}
    # non-2xx answers are errors, not served requests
    return Result(d["requests"] - d["status"], d["duration_us"] / 1e6, errors, d["p50_us"] / 1000.0, d["p99_us"] / 1000.0,
                  run.cpu, raw=d, cmd=cmd)


def siege_rc(workdir, ciphers=None):
    """siege's whole configuration (-R replaces ~/.siege/siege.conf):
    connection close (its default), no link parsing, no log file, JSON."""
    lines = ["verbose = false", "quiet = true", "json_output = true", "show-logfile = false",
             "logging = false", "protocol = HTTP/1.1", "connection = close", "parser = false",
             "failures = 1000000", "timeout = 10", "accept-encoding = ", "cache = false"]
    if ciphers:
        # siege can only pin TLS <= 1.2 suites; 1.3 is pinned on the server
        lines.append(f"ssl-ciphers = {ciphers}")
    return _write(os.path.join(workdir, "siegerc"), "\n".join(lines) + "\n")


def siege(workdir, url, seconds, concurrency, ciphers=None, rate=None, attempts=2, env=None):
    """About `seconds` of new connections, as a number of repetitions per
    siege user (-r) rather than siege's timer (-t): when siege 4.0.7's timer
    fires it cancels its users wherever they are, and one cancelled inside
    OpenSSL can leave it never exiting (a hang costs the run its timeout and a
    retry) or stalled for the window with a handful of transactions; a user
    that runs out of repetitions ends cleanly. `rate` (connections per second
    the server last sustained, Result.rate) sizes the repetitions; without one
    a single repetition per user measures it first and the rest of the window
    follows, both in the one Result. A run that still hangs is killed and run
    once more; a second hang is an error."""
    seconds = max(1.0, float(seconds))
    if not rate:
        first = _siege_attempts(workdir, url, 1, concurrency, ciphers, 1.0, attempts, env)
        if not first.requests or first.wall >= seconds * 0.8:
            return first
        rest = _siege_attempts(workdir, url, _reps(first.rate, seconds - first.wall, concurrency), concurrency,
                               ciphers, seconds - first.wall, attempts, env)
        return _sum(first, rest)
    return _siege_attempts(workdir, url, _reps(rate, seconds, concurrency), concurrency, ciphers, seconds, attempts,
                           env)


def _reps(rate, seconds, concurrency):
    return max(1, int(round(rate * seconds / concurrency)))


def _sum(a, b):
    if b.errors.get("client_failed"):
        return b
    errors = dict(a.errors)
    for k, n in b.errors.items():
        errors[k] = errors.get(k, 0) + n
    r = Result(a.requests + b.requests, a.wall + b.wall, errors, None, None, a.client_cpu + b.client_cpu,
               raw=b.raw, cmd=b.cmd)
    r.mean_ms = (a.mean_ms * a.requests + b.mean_ms * b.requests) / r.requests if r.requests else 0.0
    r.rate = b.rate
    return r


def _siege_attempts(workdir, url, reps, concurrency, ciphers, seconds, attempts, env=None):
    r = None
    for attempt in range(attempts):
        r = _siege_once(workdir, url, reps, concurrency, ciphers, seconds, env)
        if not (r.errors.get("client_failed") and isinstance(r.raw, str) and r.raw.startswith("siege hung")):
            break
    return r


def _siege_once(workdir, url, reps, concurrency, ciphers, seconds, env=None):
    rc = siege_rc(workdir, ciphers)
    cmd = procs.pinned(procs.CLIENT_CPU, ["siege", "-R", rc, "-b", "-j", f"-c{concurrency}", f"-r{reps}", url])
    # a server slower than the rate said (or a cold one) stretches the run:
    # the grace is generous, a hang is what it catches
    grace = 3 * seconds + 10
    run = procs.ClientRun(cmd, timeout=grace, env=env)
    text = run.out
    start = text.find("{")
    try:
        d = json.loads(text[start:text.rindex("}") + 1])
    except (ValueError, json.JSONDecodeError):
        why = "siege hung and was killed" if run.wall >= grace - 0.5 else "siege printed no JSON"
        return Result(0, run.wall, {"client_failed": 1}, client_cpu=run.cpu,
                      raw=why + ": " + (run.out + run.err)[-2000:], cmd=cmd)
    ok = int(d.get("successful_transactions", d.get("transactions", 0)))
    errors = {}
    if int(d.get("failed_transactions", 0)):
        errors["failed"] = int(d["failed_transactions"])
    resp_ms = float(d.get("response_time", 0)) * 1000.0
    # siege reports no percentiles: its mean response time stands in for p50
    wall = float(d.get("elapsed_time", run.wall)) or run.wall
    r = Result(ok, wall, errors, None, None, run.cpu, raw=d, cmd=cmd)
    r.mean_ms = resp_ms
    r.rate = ok / wall if wall > 0 else None
    return r
