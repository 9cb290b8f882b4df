"""Live progress on the terminal: what the run is doing (phase and cell),
how long it has run and about how long is left. What is left counts the
plan's estimate (plan.estimate_seconds: cells x windows x durations) down
step by step; a line comes at least every HEARTBEAT_S seconds, however long
a step is silent (a JVM warm-up, JMH, callgrind)."""

import threading
import time

HEARTBEAT_S = 20


def clock(s):
    s = int(max(0, s))
    return f"{s // 60}:{s % 60:02d}"


class Progress:
    def __init__(self, total_s, started_mono, log):
        """total_s: the plan's estimate of the measuring; started_mono: the
        monotonic time the whole command started (the build included)."""
        self.total, self.t0, self.log = total_s, started_mono, log
        self.base = 0.0  # the estimated seconds of the steps already done
        self.phase, self.step_est, self.step_t = "starting", 0.0, time.monotonic()
        self.doing = ""
        self.last = time.monotonic()
        self._stop = threading.Event()

    def begin(self, phase, est_s):
        """A new step, with what the plan gives it; the one before is done."""
        self.base += self.step_est
        self.phase, self.step_est, self.step_t, self.doing = phase, max(0.0, est_s), time.monotonic(), ""
        self.log(f"-- {self.line()}")

    def settle(self, base):
        """The steps so far are done and were planned at base seconds (the
        groups' profiles and pairs after a miss are spent inside them)."""
        self.base, self.step_est, self.step_t = base, 0.0, time.monotonic()

    def at(self, doing):
        """What the current step is at (a cell, a server's warm-up): shown by
        the next heartbeat line."""
        self.doing = doing

    def left(self):
        in_step = min(time.monotonic() - self.step_t, self.step_est)
        return self.total - self.base - in_step

    def line(self):
        left = self.left()
        over = time.monotonic() - self.step_t - self.step_est
        when = (f"about {clock(left)} left" if left >= 30 or over <= 0 else
                f"{clock(over)} past this step's estimate")
        return (f"{self.phase}{': ' + self.doing if self.doing else ''} | "
                f"{clock(time.monotonic() - self.t0)} elapsed, {when}")

    def printed(self):
        self.last = time.monotonic()

    def start(self):
        threading.Thread(target=self._beat, daemon=True).start()
        return self

    def stop(self):
        self._stop.set()

    def _beat(self):
        while not self._stop.wait(1.0):
            if time.monotonic() - self.last >= HEARTBEAT_S:
                self.log(f"   still running: {self.line()}")
