"""One keep-alive HTTPS connection across a certificate rotation: GET PATH,
print the answer, wait for a line on stdin, GET again on the same connection
(asserting it was not re-opened), print the answer. Bodies are printed on
one line.

    reload_client.py PORT CA.pem [PATH]   (PATH defaults to /tls)
"""
import http.client
import ssl
import sys

port, ca = int(sys.argv[1]), sys.argv[2]
path = sys.argv[3] if len(sys.argv) > 3 else "/tls"
ctx = ssl.create_default_context(cafile=ca)
conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=20)
conn.connect()
sock = conn.sock
der = sock.getpeercert(binary_form=True)


def get():
    conn.request("GET", path)
    r = conn.getresponse()
    return "status=%d %s" % (r.status, " ".join(r.read().decode(errors="replace").split()))


print("first:", get(), flush=True)
sys.stdin.readline()
body = get()
same = conn.sock is sock and sock.getpeercert(binary_form=True) == der
print("second:", body, "same-connection=%s" % same, flush=True)
