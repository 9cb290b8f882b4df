// The Go crypto/tls end of an opener connection: a TLS implementation that
// shares no code with OpenSSL or the JDK, which never sends a KeyUpdate of
// its own and answers each one that asks for it. Against it, every KeyUpdate
// in tlsbridge's direction comes from tlsbridge's key limits, which the
// opener then checks at the byte. It speaks OpenerRun's exchange: ROUNDS
// times the client sends the chunk (the SIZES writes) and reads one back,
// the server the reverse; the bytes are OpenerRun's stream (SHA-256 of label
// and counter), checked here as they arrive. Standard library only.
//
//	gopeer server PEM NAME PROTOCOL SIZES ROUNDS          prints LISTENING <port>
//	gopeer client PEM NAME PROTOCOL SIZES ROUNDS PORT
//
// PEM holds the certificate and its key (server) or the certificate to trust
// (client); SIZES is a comma-separated list. The last line is
// "DONE sent=N received=M" (exit 0) or "ERROR ..." (exit 1).
package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// stream returns n bytes of label's stream from offset from.
func stream(label string, from int64, n int) []byte {
	out := make([]byte, 0, n+32)
	block := from / 32
	skip := int(from % 32)
	var ctr [8]byte
	for len(out) < n {
		binary.BigEndian.PutUint64(ctr[:], uint64(block))
		h := sha256.Sum256(append([]byte(label), ctr[:]...))
		out = append(out, h[skip:]...)
		skip = 0
		block++
	}
	return out[:n]
}

func fail(format string, a ...interface{}) {
	fmt.Printf("ERROR "+format+"\n", a...)
	os.Exit(1)
}

func main() {
	if len(os.Args) < 7 || (os.Args[1] == "client") != (len(os.Args) == 8) {
		fail("usage: gopeer server|client PEM NAME PROTOCOL SIZES ROUNDS [PORT]")
	}
	role, pemFile, name, protocol := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	var sizes []int
	chunk := 0
	for _, s := range strings.Split(os.Args[5], ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			fail("bad size %q", s)
		}
		sizes = append(sizes, n)
		chunk += n
	}
	rounds, err := strconv.Atoi(os.Args[6])
	if err != nil {
		fail("bad rounds %q", os.Args[6])
	}
	pemBytes, err := os.ReadFile(pemFile)
	if err != nil {
		fail("%v", err)
	}
	cfg := &tls.Config{ServerName: "localhost"}
	switch protocol {
	case "TLSv1.3":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
	case "TLSv1.2":
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
	default:
		fail("unknown protocol %q", protocol)
	}

	var conn *tls.Conn
	client := role == "client"
	if client {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pemBytes) {
			fail("no certificate in %s", pemFile)
		}
		cfg.RootCAs = roots
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+os.Args[7], 10*time.Second)
		if err != nil {
			fail("%v", err)
		}
		conn = tls.Client(c, cfg)
	} else {
		cert, err := tls.X509KeyPair(pemBytes, pemBytes)
		if err != nil {
			fail("%s: %v", pemFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fail("%v", err)
		}
		fmt.Printf("LISTENING %d\n", l.Addr().(*net.TCPAddr).Port)
		l.(*net.TCPListener).SetDeadline(time.Now().Add(60 * time.Second))
		c, err := l.Accept()
		l.Close()
		if err != nil {
			fail("accept: %v", err)
		}
		conn = tls.Server(c, cfg)
	}
	conn.SetDeadline(time.Now().Add(120 * time.Second))
	if err := conn.Handshake(); err != nil {
		fail("handshake: %v", err)
	}

	me, peer := "server", "client"
	if client {
		me, peer = peer, me
	}
	sendLabel, recvLabel := name+"/"+me, name+"/"+peer
	var sent, received int64
	expect := func() {
		got := make([]byte, chunk)
		if _, err := io.ReadFull(conn, got); err != nil {
			fail("read after %d bytes: %v", received, err)
		}
		if !bytes.Equal(got, stream(recvLabel, received, chunk)) {
			fail("the bytes read at %d differ from the stream", received)
		}
		received += int64(chunk)
	}
	for r := 0; r < rounds; r++ {
		if !client {
			expect()
		}
		for _, n := range sizes {
			if _, err := conn.Write(stream(sendLabel, sent, n)); err != nil {
				fail("write after %d bytes: %v", sent, err)
			}
			sent += int64(n)
		}
		if client {
			expect()
		}
	}
	if !client {
		// the client's close_notify, and nothing before it
		var b [1]byte
		if n, err := conn.Read(b[:]); n != 0 || !errors.Is(err, io.EOF) {
			fail("after the last chunk: %d bytes, %v (not the client's close)", n, err)
		}
	}
	if err := conn.Close(); err != nil && client {
		fail("close: %v", err)
	}
	fmt.Printf("DONE sent=%d received=%d\n", sent, received)
}
