"""One keep-alive HTTPS connection across a certificate rotation: GET /tls,
print the server certificate's serial, wait for a line on stdin, GET again on
the same connection (asserting it was not re-opened), print the answer.

    reload_client.py PORT CA.pem
"""
import http.client
import ssl
import sys

port, ca = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=ca)
conn = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=20)
conn.connect()
sock = conn.sock
der = sock.getpeercert(binary_form=True)
conn.request("GET", "/tls")
print("first:", conn.getresponse().read().decode().strip(), flush=True)
sys.stdin.readline()
conn.request("GET", "/tls")
body = conn.getresponse().read().decode().strip()
same = conn.sock is sock and sock.getpeercert(binary_form=True) == der
print("second:", body, "same-connection=%s" % same, flush=True)
