// go-redis v8 over TLS for Volley's compatibility suite: the client trusts
// only the test CA (RootCAs), presents the client certificate the server
// requires, and logs in as an ACL user restricted to app:* keys and channels.
// It pipelines writes and reads, runs a MULTI (TxPipelined), blocks in BLPOP
// until another connection pushes, receives a published message, and checks
// Redis's refusals for the user's missing permissions, a wrong password and a
// handshake without a client certificate. Prints one line per step; exits 1
// at the first mismatch.
//
// Environment: REDIS_HOST, TLS_PORT, TLS_CA, TLS_CERT, TLS_KEY, ACL_USER,
// ACL_PASS.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-redis/redis/v8"
)

var ctx = context.Background()

func check(line string, got, want interface{}) {
	g, w := fmt.Sprint(got), fmt.Sprint(want)
	if g != w {
		fmt.Fprintf(os.Stderr, "FAIL: %s: got %q, want %q\n", line, g, w)
		os.Exit(1)
	}
	fmt.Println(line, g)
}

func tlsConfig(clientCert bool) *tls.Config {
	pem, err := os.ReadFile(os.Getenv("TLS_CA"))
	if err != nil {
		panic(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		panic("no CA certificate in TLS_CA")
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if clientCert {
		pair, err := tls.LoadX509KeyPair(os.Getenv("TLS_CERT"), os.Getenv("TLS_KEY"))
		if err != nil {
			panic(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

func client(pass string, clientCert bool) *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:        os.Getenv("REDIS_HOST") + ":" + os.Getenv("TLS_PORT"),
		Username:    os.Getenv("ACL_USER"),
		Password:    pass,
		TLSConfig:   tlsConfig(clientCert),
		MaxRetries:  -1,
		ReadTimeout: 10 * time.Second,
	})
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func main() {
	pass := os.Getenv("ACL_PASS")
	rdb := client(pass, true)
	defer rdb.Close()
	check("whoami", rdb.Do(ctx, "ACL", "WHOAMI").Val(), os.Getenv("ACL_USER"))
	pipelined(rdb)
	multi(rdb)
	blocking(rdb, pass)
	pubsub(rdb, pass)
	check("flushall", errText(rdb.FlushAll(ctx).Err()),
		"NOPERM this user has no permissions to run the 'flushall' command")
	check("get other:key", errText(rdb.Get(ctx, "other:key").Err()),
		"NOPERM this user has no permissions to access one of the keys used as arguments")

	bad := client("wrong", true)
	check("wrong password", errText(bad.Ping(ctx).Err()),
		"WRONGPASS invalid username-password pair or user is disabled.")
	bad.Close()
	noCert := client(pass, false)
	check("no client certificate refused", noCert.Ping(ctx).Err() != nil, true)
	noCert.Close()
	fmt.Println("done")
}

func pipelined(rdb *redis.Client) {
	value := func(i int) string { return fmt.Sprintf("v%d%s", i, strings.Repeat("x", i%300)) }
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 2000; i++ {
			p.Set(ctx, fmt.Sprintf("app:go:k%d", i), value(i), 0)
		}
		return nil
	})
	check("pipelined writes", errText(err), "no error")
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < 2000; i++ {
			p.Get(ctx, fmt.Sprintf("app:go:k%d", i))
		}
		return nil
	})
	ok := 0
	for i, c := range cmds {
		if c.(*redis.StringCmd).Val() == value(i) {
			ok++
		}
	}
	check("pipelined reads intact", ok, 2000)
}

func multi(rdb *redis.Client) {
	var incr, incrBy *redis.IntCmd
	var get *redis.StringCmd
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		incr = p.Incr(ctx, "app:go:n")
		incrBy = p.IncrBy(ctx, "app:go:n", 41)
		p.Set(ctx, "app:go:s", "in-multi", 0)
		get = p.Get(ctx, "app:go:s")
		return nil
	})
	check("exec", errText(err), "no error")
	check("exec replies", fmt.Sprintf("%d %d %s", incr.Val(), incrBy.Val(), get.Val()), "1 42 in-multi")
}

func blocking(rdb *redis.Client, pass string) {
	popped := make(chan string, 1)
	waiter := client(pass, true)
	defer waiter.Close()
	go func() {
		v, err := waiter.BLPop(ctx, 10*time.Second, "app:go:q").Result()
		popped <- fmt.Sprint(v, err)
	}()
	// The pop must be blocked before the push for this to test blocking.
	blocked := false
	for i := 0; i < 200 && !blocked; i++ {
		blocked = strings.Contains(rdb.ClientList(ctx).Val(), "cmd=blpop")
		time.Sleep(10 * time.Millisecond)
	}
	check("blpop blocked", blocked, true)
	check("rpush", rdb.RPush(ctx, "app:go:q", "job1").Val(), 1)
	select {
	case v := <-popped:
		check("blpop", v, "[app:go:q job1] <nil>")
	case <-time.After(10 * time.Second):
		check("blpop", "timeout", "[app:go:q job1] <nil>")
	}
}

func pubsub(rdb *redis.Client, pass string) {
	subc := client(pass, true)
	defer subc.Close()
	sub := subc.Subscribe(ctx, "app:go:ch")
	defer sub.Close()
	conf, err := sub.ReceiveTimeout(ctx, 10*time.Second)
	check("subscribe", fmt.Sprint(conf, err), "subscribe: app:go:ch <nil>")
	check("publish", rdb.Publish(ctx, "app:go:ch", "over tls").Val(), 1)
	msg, err := sub.ReceiveTimeout(ctx, 10*time.Second)
	check("message", fmt.Sprint(msg, err), "Message<app:go:ch: over tls> <nil>")
	check("publish other", errText(rdb.Publish(ctx, "other", "x").Err()),
		"NOPERM this user has no permissions to access one of the channels used as arguments")
}
