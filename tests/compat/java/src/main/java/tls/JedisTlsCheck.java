package tls;

import java.io.FileInputStream;
import java.io.InputStream;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.Transaction;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Jedis over TLS for Volley's compatibility suite: every connection trusts
 * only the test CA and presents the client certificate (the server requires
 * one), and logs in as an ACL user restricted to app:* keys and channels.
 * It pipelines writes and reads, runs a MULTI, blocks in BLPOP until another
 * connection pushes, receives a published message, and checks that the
 * user's missing permissions and a wrong password are refused with Redis's
 * errors. Exits 1 on the first mismatch.
 *
 * Usage: JedisTlsCheck resp2|resp3. Environment: REDIS_HOST, TLS_PORT,
 * TLS_CA (PEM), TLS_P12 and TLS_P12_PASS (client key and certificate),
 * ACL_USER, ACL_PASS.
 */
public class JedisTlsCheck {
    static void fail(String msg) {
        System.out.flush();
        System.err.println("FAIL: " + msg);
        System.exit(1);
    }

    static void expectEq(Object got, Object want, String line) {
        if (!String.valueOf(want).equals(String.valueOf(got))) {
            fail(line + ": got " + got + ", want " + want);
        }
        System.out.println(line + " " + got);
    }

    /** A socket factory trusting the test CA and offering the client certificate. */
    static SSLSocketFactory socketFactory(boolean withClientCert) throws Exception {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        try (InputStream in = new FileInputStream(System.getenv("TLS_CA"))) {
            Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(in);
            trust.setCertificateEntry("test-ca", ca);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (withClientCert) {
            char[] pass = System.getenv("TLS_P12_PASS").toCharArray();
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = new FileInputStream(System.getenv("TLS_P12"))) {
                keys.load(in, pass);
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, pass);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return ctx.getSocketFactory();
    }

    static Jedis connect(RedisProtocol proto, String user, String pass, boolean clientCert) throws Exception {
        DefaultJedisClientConfig cfg = DefaultJedisClientConfig.builder()
                .ssl(true).sslSocketFactory(socketFactory(clientCert))
                .user(user).password(pass).protocol(proto)
                .socketTimeoutMillis(10000).build();
        HostAndPort hp = new HostAndPort(System.getenv("REDIS_HOST"), Integer.parseInt(System.getenv("TLS_PORT")));
        return new Jedis(hp, cfg);
    }

    /** The error text of running r, or "no error". */
    static String errorOf(ThrowingRunnable r) {
        try {
            r.run();
            return "no error";
        } catch (Exception e) {
            return e.getMessage();
        }
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        RedisProtocol proto = args[0].equals("resp3") ? RedisProtocol.RESP3 : RedisProtocol.RESP2;
        String user = System.getenv("ACL_USER");
        String pass = System.getenv("ACL_PASS");
        String p = "app:" + args[0] + ":";
        try (Jedis j = connect(proto, user, pass, true)) {
            expectEq(j.aclWhoAmI(), user, "whoami");
            pipelined(j, p);
            multi(j, p);
            blocking(j, proto, user, pass, p);
            pubsub(j, proto, user, pass, p);
            expectEq(errorOf(() -> j.flushAll()),
                    "NOPERM this user has no permissions to run the 'flushall' command", "flushall");
            expectEq(errorOf(() -> j.get("other:key")),
                    "NOPERM this user has no permissions to access one of the keys used as arguments", "get other:key");
        }
        expectEq(errorOf(() -> connect(proto, user, "wrong", true).ping()),
                "WRONGPASS invalid username-password pair or user is disabled.", "wrong password");
        String noCert = errorOf(() -> connect(proto, user, pass, false).ping());
        expectEq(!noCert.equals("no error"), true, "no client certificate refused");
        System.out.println("done");
    }

    /** 2000 writes then 2000 reads, each batch sent as one pipeline. */
    static void pipelined(Jedis j, String p) {
        Pipeline pl = j.pipelined();
        for (int i = 0; i < 2000; i++) {
            pl.set(p + "k" + i, "v" + i + "x".repeat(i % 300));
        }
        pl.sync();
        List<Response<String>> got = new ArrayList<>();
        Pipeline rd = j.pipelined();
        for (int i = 0; i < 2000; i++) {
            got.add(rd.get(p + "k" + i));
        }
        rd.sync();
        int ok = 0;
        for (int i = 0; i < 2000; i++) {
            if (got.get(i).get().equals("v" + i + "x".repeat(i % 300))) {
                ok++;
            }
        }
        expectEq(ok, 2000, "pipelined reads intact");
    }

    static void multi(Jedis j, String p) {
        Transaction t = j.multi();
        t.incr(p + "n");
        t.incrBy(p + "n", 41);
        t.set(p + "s", "in-multi");
        t.get(p + "s");
        expectEq(t.exec(), "[1, 42, OK, in-multi]", "exec");
    }

    /** BLPOP on one connection returns once another pushes. */
    static void blocking(Jedis j, RedisProtocol proto, String user, String pass, String p) throws Exception {
        BlockingQueue<String> popped = new LinkedBlockingQueue<>();
        Thread waiter = new Thread(() -> {
            try (Jedis b = connect(proto, user, pass, true)) {
                popped.add(String.valueOf(b.blpop(10, p + "q")));
            } catch (Exception e) {
                popped.add("error " + e.getMessage());
            }
        });
        waiter.start();
        // The pop must be blocked before the push for this to test blocking.
        for (int i = 0; i < 200 && !j.clientList().contains("cmd=blpop"); i++) {
            Thread.sleep(10);
        }
        expectEq(j.clientList().contains("cmd=blpop"), true, "blpop blocked");
        expectEq(j.rpush(p + "q", "job1"), 1, "rpush");
        expectEq(popped.poll(10, TimeUnit.SECONDS), "[" + p + "q, job1]", "blpop");
        waiter.join();
    }

    static void pubsub(Jedis j, RedisProtocol proto, String user, String pass, String p) throws Exception {
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        JedisPubSub listener = new JedisPubSub() {
            @Override
            public void onSubscribe(String channel, int n) {
                events.add("subscribe " + channel + " " + n);
            }

            @Override
            public void onMessage(String channel, String message) {
                events.add("message " + channel + " " + message);
                unsubscribe();
            }
        };
        Thread sub = new Thread(() -> {
            try (Jedis s = connect(proto, user, pass, true)) {
                s.subscribe(listener, p + "ch");
                events.add("subscribe() returned");
            } catch (Exception e) {
                events.add("error " + e.getMessage());
            }
        });
        sub.start();
        expectEq(events.poll(10, TimeUnit.SECONDS), "subscribe " + p + "ch 1", "event");
        expectEq(j.publish(p + "ch", "over tls"), 1, "publish");
        expectEq(events.poll(10, TimeUnit.SECONDS), "message " + p + "ch over tls", "event");
        expectEq(events.poll(10, TimeUnit.SECONDS), "subscribe() returned", "event");
        expectEq(errorOf(() -> j.publish("other", "x")),
                "NOPERM this user has no permissions to access one of the channels used as arguments", "publish other");
        sub.join();
    }
}
