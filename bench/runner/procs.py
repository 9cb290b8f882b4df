"""Starting, watching and stopping processes; ports; CPU accounting from
/proc (utime+stime of a process tree, which keeps the time of threads that
have already exited, unlike per-thread schedstat)."""

import os
import signal
import socket
import subprocess
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVER_CPU = "1"
CLIENT_CPU = "0"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout, proc=None):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def _stat_fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    # comm may contain spaces and parentheses: split after the last ')'
    return s[s.rindex(")") + 2:].split()


def tree(pid):
    """pid and its descendants (nginx master + worker)."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(_stat_fields(d)[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def busiest(pid):
    """The process of pid's tree that used the most CPU: the JVM itself, or
    nginx's worker rather than its master."""
    return max(tree(pid), key=lambda p: (cpu_seconds([p]), p))


def cpu_seconds(pids):
    """utime+stime of the given processes, in seconds (tick resolution)."""
    t = 0
    for p in pids:
        try:
            f = _stat_fields(p)
            t += int(f[11]) + int(f[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return t / CLK_TCK


# HotSpot's JIT compiler threads as /proc shows them (comm is cut at 15
# characters: "C2 CompilerThread0" reads "C2 CompilerThre")
JIT_THREADS = ("C1 CompilerThre", "C2 CompilerThre")


def jit_threads(pids):
    """{tid: utime+stime seconds} of the JIT compiler threads of the given
    processes. Per thread, since HotSpot starts and ends compiler threads
    as its queue grows and shrinks (UseDynamicNumberOfCompilerThreads): a
    sum over the threads alive now would drop an exited one's whole time."""
    out = {}
    for p in pids:
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                with open(f"/proc/{p}/task/{t}/stat") as f:
                    s = f.read()
            except OSError:
                continue
            if s[s.index("(") + 1:s.rindex(")")].startswith(JIT_THREADS):
                f = s[s.rindex(")") + 2:].split()
                out[int(t)] = (int(f[11]) + int(f[12])) / CLK_TCK
    return out


def jit_seconds(before, after):
    """CPU seconds the compiler threads used between two jit_threads()
    snapshots: a thread started meanwhile counts whole; one that exited
    loses only its time since `before` (a short undercount)."""
    return sum(max(0.0, v - before.get(t, 0.0)) for t, v in after.items())


def cpu_busy(cpu):
    """Busy and steal seconds of one CPU from /proc/stat (all processes):
    with the server's own time it tells how much others used its CPU."""
    with open("/proc/stat") as f:
        for ln in f:
            if ln.startswith(f"cpu{cpu} "):
                v = [int(x) for x in ln.split()[1:]]
                user, nice, system, idle, iowait, irq, softirq, steal = (v + [0] * 8)[:8]
                return (user + nice + system + irq + softirq) / CLK_TCK, steal / CLK_TCK
    return 0.0, 0.0


def pinned(cpu, cmd):
    return ["taskset", "-c", cpu] + list(cmd)


class Proc:
    """A server process started in its own session, output to a log file."""

    def __init__(self, cmd, log_path, env=None, cwd=None):
        self.cmd = list(cmd)
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.p = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                  start_new_session=True)
        self.pid = self.p.pid

    def alive(self):
        return self.p.poll() is None

    def output(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def wait_line(self, prefixes, timeout):
        """Waits for a line starting with one of prefixes; returns it or None."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for line in self.output().splitlines():
                if line.startswith(tuple(prefixes)):
                    return line
            if not self.alive():
                return None
            time.sleep(0.1)
        return None

    def stop(self, sig=signal.SIGTERM, grace=10):
        if self.alive():
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.p.wait(5)
        self.log.close()



class ClientRun:
    """A load generator run whose CPU time is taken from wait4()."""

    def __init__(self, cmd, timeout, env=None):
        self.cmd = cmd
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                             env=dict(os.environ, **env) if env else None)
        out_chunks, err_chunks = [], []

        def pump(stream, acc):
            for chunk in iter(lambda: stream.read(65536), b""):
                acc.append(chunk)

        threads = [threading.Thread(target=pump, args=(p.stdout, out_chunks), daemon=True),
                   threading.Thread(target=pump, args=(p.stderr, err_chunks), daemon=True)]
        for t in threads:
            t.start()
        deadline = t0 + timeout
        try:
            status, ru = self._reap(p, deadline)
        except BaseException:
            # interrupted (SIGTERM, Ctrl-C): never leave a load generator behind
            try:
                os.killpg(p.pid, signal.SIGKILL)
                os.wait4(p.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
        for t in threads:
            t.join(5)
        self.wall = time.monotonic() - t0
        self.rc = p.returncode
        self.out = b"".join(out_chunks).decode("utf-8", "replace")
        self.err = b"".join(err_chunks).decode("utf-8", "replace")
        self.cpu = ru.ru_utime + ru.ru_stime

    @staticmethod
    def _reap(p, deadline):
        while True:
            pid, st, r = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                return st, r
            if time.monotonic() > deadline:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                pid, st, r = os.wait4(p.pid, 0)
                return st, r
            time.sleep(0.02)
