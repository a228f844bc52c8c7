package sentinel;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.JedisSentinelPool;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Jedis Sentinel check for Volley's compatibility suite: a JedisSentinelPool
 * finds the primary through the sentinels and keeps writing (INCR of a
 * counter, then SET of a key named after the value) while the test kills
 * the primary. It prints "master host:port" each time the pool switches,
 * and exits 0 once 100 writes have succeeded on a second primary, after
 * checking there that the last write before the switch (if acknowledged by
 * WAIT 2, both replicas) and every write since are present. Exits 1 on a mismatch, 2 when
 * no switch happens within the time limit.
 *
 * Usage: JedisSentinelCheck master-name host:port[,host:port...] seconds
 */
public class JedisSentinelCheck {
    public static void main(String[] args) throws Exception {
        Set<String> sentinels = new HashSet<>();
        for (String s : args[1].split(",")) sentinels.add(s);
        long deadline = System.currentTimeMillis() + Long.parseLong(args[2]) * 1000;
        JedisPoolConfig cfg = new JedisPoolConfig();
        cfg.setMaxTotal(2);
        Set<HostAndPort> seen = new LinkedHashSet<>();
        long lastAcked = 0;
        int afterSwitch = 0;
        try (JedisSentinelPool pool = new JedisSentinelPool(args[0], sentinels, cfg, 2000)) {
            while (System.currentTimeMillis() < deadline) {
                HostAndPort master = pool.getCurrentHostMaster();
                if (seen.add(master)) {
                    System.out.println("master " + master);
                    System.out.flush();
                }
                try (Jedis j = pool.getResource()) {
                    long n = j.incr("jedis:counter");
                    j.set("jedis:w:" + n, Long.toString(n));
                    // Before the switch a write counts as acknowledged once
                    // both replicas have it: with WAIT 1, Sentinel may promote
                    // the other one (it ranks replicas by offsets up to 5 s
                    // old), which then never had the write, Redis alike.
                    int need = seen.size() >= 2 ? 1 : 2;
                    if (j.waitReplicas(need, 100) >= need) lastAcked = n;
                    if (seen.size() >= 2) {
                        afterSwitch++;
                        if (afterSwitch >= 100) {
                            check(j, lastAcked);
                            System.out.println("switched after writes, " + afterSwitch + " on the new primary");
                            return;
                        }
                    }
                } catch (JedisException e) {
                    Thread.sleep(50);
                }
            }
        }
        System.out.println("no switch seen: masters " + seen);
        System.exit(2);
    }

    /** Every acknowledged write up to lastAcked is on the new primary. */
    static void check(Jedis j, long lastAcked) {
        for (long n = Math.max(1, lastAcked - 200); n <= lastAcked; n++) {
            String v = j.get("jedis:w:" + n);
            if (!Long.toString(n).equals(v)) {
                System.out.println("lost acknowledged write " + n + ": " + v);
                System.exit(1);
            }
        }
    }
}
