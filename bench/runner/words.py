"""The names a reader sees for a workload's mode and size, shared by the
report, the console and the targets' labels (imports nothing)."""

SIZES = {1024: "1 KiB", 16384: "16 KiB", 65536: "64 KiB", 1048576: "1 MiB"}
MODE_SHORT = {"keepalive": "keep-alive", "newconn": "new connection", "resumed": "resumed connection"}


def size_label(n):
    return SIZES.get(n, f"{n} B")
