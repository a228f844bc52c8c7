package pipeline.kvstore.aliyun.com;
import java.util.Date;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
public class RedisPipelinePerformanceTest {
        // Volley compat: host, port and password come from the environment
        // (REDIS_HOST, REDIS_PORT, REDIS_PASSWORD); the rest is the seed verbatim.
        static final String host = System.getenv("REDIS_HOST");
        static final int port = Integer.parseInt(System.getenv("REDIS_PORT"));
        static final String password = System.getenv("REDIS_PASSWORD");
        public static void main(String[] args) {
            Jedis jedis = new Jedis(host, port);
                //The password of the ApsaraDB for Redis instance.
                String authString = jedis.auth(password);// password
                if (! authString.equals("OK")) {
                    System.err.println("AUTH Failed: " + authString);
                    jedis.close();
                    return;
                }
                //Runs several commands consecutively.
                final int COUNT=5000;
                String key = "KVStore-Tanghan";
                //1 ---Without using pipeline operations---
                jedis.del(key);//Initializes the key.
                Date ts1 = new Date();
                for (int i = 0; i < COUNT; i++) {
                    //Sends a request and receives a response.
                    jedis.incr(key);
                }
                Date ts2 = new Date();
                System.out.println("Without Pipeline > value is: "+jedis.get(key)+" > Time elapsed: " + (ts2.getTime() - ts1.getTime())+ "ms");
                //2 ----Using pipeline operations---
                jedis.del(key);//Initializes the key.
                Pipeline p1 = jedis.pipelined();
                Date ts3 = new Date();
                for (int i = 0; i < COUNT; i++) {
                    //Sends the request. 
                    p1.incr(key);
                }
                //Receives the response.
                p1.sync();
                Date ts4 = new Date();
                System.out.println("Using Pipeline > value is:"+jedis.get(key)+" > Time elapsed:" + (ts4.getTime() - ts3.getTime())+ "ms");
                jedis.close();
        }
    }
