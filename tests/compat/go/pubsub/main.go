// A go-redis v8 Pub/Sub check for Volley's compatibility suite: it
// subscribes, pattern-subscribes, pings, publishes from a second client and
// queries PUBSUB, printing one deterministic line per observation. Any
// mismatch with what Redis 7.0 does makes it exit 1 with a message on
// stderr; a watchdog exits 2 if anything hangs. The server is REDIS_ADDR.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-redis/redis/v8"
)

// Every payload byte value, CR LF and NUL included, must survive the trip.
var binary = func() string {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return "\r\n" + string(b) + "\x00"
}()

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func check(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func newClient() *redis.Client {
	return redis.NewClient(&redis.Options{
		Addr:        os.Getenv("REDIS_ADDR"),
		DialTimeout: 5 * time.Second,
		ReadTimeout: 5 * time.Second,
		// A retried command could mask a dropped reply.
		MaxRetries: -1,
	})
}

// receive is Receive with a short bound, formatted as the line the test expects.
func receive(ctx context.Context, ps *redis.PubSub) string {
	msg, err := ps.ReceiveTimeout(ctx, 5*time.Second)
	check(err, "Receive")
	switch m := msg.(type) {
	case *redis.Subscription:
		ch := m.Channel
		if ch == "" {
			ch = "<nil>"
		}
		return fmt.Sprintf("%s %s %d", m.Kind, ch, m.Count)
	case *redis.Pong:
		return fmt.Sprintf("pong %q", m.Payload)
	case *redis.Message:
		return formatMessage(m)
	}
	fail("Receive returned %T %v", msg, msg)
	return ""
}

func formatMessage(m *redis.Message) string {
	if m.Pattern != "" {
		return fmt.Sprintf("pmessage %s %s %q", m.Pattern, m.Channel, m.Payload)
	}
	return fmt.Sprintf("message %s %q", m.Channel, m.Payload)
}

// expect prints a line after checking it is the one wanted, so the output
// stops at the first surprise.
func expect(got, want string) {
	if got != want {
		fail("got %q, want %q", got, want)
	}
	fmt.Println(got)
}

func publish(ctx context.Context, pub *redis.Client, channel, payload string, want int64) {
	n, err := pub.Publish(ctx, channel, payload).Result()
	check(err, "PUBLISH "+channel)
	expect(fmt.Sprintf("publish %s %d", channel, n), fmt.Sprintf("publish %s %d", channel, want))
}

func numsub(ctx context.Context, pub *redis.Client, channels ...string) string {
	m, err := pub.PubSubNumSub(ctx, channels...).Result()
	check(err, "PUBSUB NUMSUB")
	parts := []string{}
	for _, c := range channels {
		parts = append(parts, fmt.Sprintf("%s=%d", c, m[c]))
	}
	return "numsub " + strings.Join(parts, " ")
}

func channels(ctx context.Context, pub *redis.Client, pattern string) string {
	cs, err := pub.PubSubChannels(ctx, pattern).Result()
	check(err, "PUBSUB CHANNELS")
	// The server lists channels in hash-table order, which is unspecified.
	sort.Strings(cs)
	return fmt.Sprintf("channels %s [%s]", pattern, strings.Join(cs, " "))
}

func numpat(ctx context.Context, pub *redis.Client) string {
	n, err := pub.PubSubNumPat(ctx).Result()
	check(err, "PUBSUB NUMPAT")
	return fmt.Sprintf("numpat %d", n)
}

// receiveAPI drives one PubSub through Receive/ReceiveMessage: every
// confirmation, pong and message is read explicitly.
func receiveAPI(ctx context.Context, sub, pub *redis.Client) {
	ps := sub.Subscribe(ctx, "c1", "c2", "p:both")
	defer ps.Close()
	expect(receive(ctx, ps), "subscribe c1 1")
	expect(receive(ctx, ps), "subscribe c2 2")
	expect(receive(ctx, ps), "subscribe p:both 3")
	check(ps.PSubscribe(ctx, "p:*"), "PSUBSCRIBE")
	expect(receive(ctx, ps), "psubscribe p:* 4")
	// Subscribing again is not an error and keeps the count.
	check(ps.Subscribe(ctx, "c1"), "SUBSCRIBE again")
	expect(receive(ctx, ps), "subscribe c1 4")

	// In subscribed mode RESP2 PING answers ["pong", payload].
	check(ps.Ping(ctx, "hi"), "PING hi")
	expect(receive(ctx, ps), `pong "hi"`)
	check(ps.Ping(ctx), "PING")
	expect(receive(ctx, ps), `pong ""`)

	expect(numsub(ctx, pub, "c1", "c2", "p:both", "none"), "numsub c1=1 c2=1 p:both=1 none=0")
	expect(channels(ctx, pub, "*"), "channels * [c1 c2 p:both]")
	expect(channels(ctx, pub, "c*"), "channels c* [c1 c2]")
	expect(numpat(ctx, pub), "numpat 1")

	publish(ctx, pub, "c1", "hello", 1)
	publish(ctx, pub, "nobody", "lost", 0)
	publish(ctx, pub, "p:x", "pm", 1)
	// One client counts twice when both its channel and its pattern match.
	publish(ctx, pub, "p:both", "twice", 2)
	publish(ctx, pub, "c2", binary, 1)
	publish(ctx, pub, "c1", "", 1)

	next := func() string {
		m, err := ps.ReceiveMessage(ctx)
		check(err, "ReceiveMessage")
		return formatMessage(m)
	}
	expect(next(), `message c1 "hello"`)
	expect(next(), `pmessage p:* p:x "pm"`)
	expect(next(), `message p:both "twice"`)
	expect(next(), `pmessage p:* p:both "twice"`)
	m, err := ps.ReceiveMessage(ctx)
	check(err, "ReceiveMessage binary")
	if m.Channel != "c2" || m.Payload != binary {
		fail("binary payload on %s came back as %q", m.Channel, m.Payload)
	}
	fmt.Printf("message c2 binary %d bytes intact\n", len(m.Payload))
	expect(next(), `message c1 ""`)

	check(ps.Unsubscribe(ctx, "c1"), "UNSUBSCRIBE c1")
	expect(receive(ctx, ps), "unsubscribe c1 3")
	publish(ctx, pub, "c1", "gone", 0)
	// Unsubscribing from a channel never subscribed still confirms it.
	check(ps.Unsubscribe(ctx, "never"), "UNSUBSCRIBE never")
	expect(receive(ctx, ps), "unsubscribe never 3")
	check(ps.PUnsubscribe(ctx), "PUNSUBSCRIBE")
	expect(receive(ctx, ps), "punsubscribe p:* 2")
	expect(numpat(ctx, pub), "numpat 0")
	publish(ctx, pub, "p:x", "gone", 0)
	check(ps.Unsubscribe(ctx, "c2", "p:both"), "UNSUBSCRIBE c2 p:both")
	expect(receive(ctx, ps), "unsubscribe c2 1")
	expect(receive(ctx, ps), "unsubscribe p:both 0")
	// With nothing left, UNSUBSCRIBE answers once with a null channel.
	check(ps.Unsubscribe(ctx), "UNSUBSCRIBE all")
	expect(receive(ctx, ps), "unsubscribe <nil> 0")
	expect(channels(ctx, pub, "*"), "channels * []")
}

// channelAPI uses the Channel() Go channel, as most go-redis programs do,
// for a stream of pipelined publishes and a pattern message.
func channelAPI(ctx context.Context, sub, pub *redis.Client) {
	ps := sub.Subscribe(ctx, "stream")
	// Wait for the confirmation so no publish can precede the subscription.
	expect(receive(ctx, ps), "subscribe stream 1")
	check(ps.PSubscribe(ctx, "ev.*"), "PSUBSCRIBE ev.*")
	expect(receive(ctx, ps), "psubscribe ev.* 2")
	ch := ps.Channel(redis.WithChannelSize(200))

	const n = 100
	cmds, err := pub.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := 0; i < n; i++ {
			p.Publish(ctx, "stream", fmt.Sprint(i))
		}
		p.Publish(ctx, "ev.done", "end")
		return nil
	})
	check(err, "pipelined PUBLISH")
	for i, c := range cmds {
		if v := c.(*redis.IntCmd).Val(); v != 1 {
			fail("pipelined PUBLISH %d reached %d subscribers, want 1", i, v)
		}
	}
	fmt.Printf("pipelined publish %d x 1\n", len(cmds))

	get := func() *redis.Message {
		select {
		case m, ok := <-ch:
			if !ok {
				fail("Channel closed early")
			}
			return m
		case <-ctx.Done():
			fail("Channel: %v", ctx.Err())
		}
		return nil
	}
	for i := 0; i < n; i++ {
		m := get()
		if m.Channel != "stream" || m.Payload != fmt.Sprint(i) || m.Pattern != "" {
			fail("Channel message %d: %s", i, formatMessage(m))
		}
	}
	fmt.Printf("channel stream %d messages in order\n", n)
	expect(formatMessage(get()), `pmessage ev.* ev.done "end"`)

	// Ping on a PubSub whose Channel() goroutine is reading: the pong is
	// consumed there and the connection must stay usable.
	check(ps.Ping(ctx, "alive"), "PING while channel reading")
	publish(ctx, pub, "stream", "after-ping", 1)
	expect(formatMessage(get()), `message stream "after-ping"`)

	check(ps.Close(), "Close")
	select {
	case m, ok := <-ch:
		if ok {
			fail("message after Close: %s", formatMessage(m))
		}
	case <-ctx.Done():
		fail("Channel not closed by Close")
	}
	fmt.Println("channel closed")
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The server drops the subscription once it sees the connection close.
		s := numsub(ctx, pub, "stream")
		if s == "numsub stream=0" || time.Now().After(deadline) {
			expect(s, "numsub stream=0")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func main() {
	time.AfterFunc(25*time.Second, func() {
		fmt.Fprintln(os.Stderr, "FAIL: watchdog: still running after 25s")
		os.Exit(2)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	sub, pub := newClient(), newClient()
	defer sub.Close()
	defer pub.Close()
	check(pub.Ping(ctx).Err(), "PING")

	receiveAPI(ctx, sub, pub)
	channelAPI(ctx, sub, pub)
	fmt.Println("done")
}
