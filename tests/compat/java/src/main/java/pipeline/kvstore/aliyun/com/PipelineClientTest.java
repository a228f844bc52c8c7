package pipeline.kvstore.aliyun.com;
import java.util.List;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
    public class PipelineClientTest {
        // Volley compat: host, port and password come from the environment
        // (REDIS_HOST, REDIS_PORT, REDIS_PASSWORD); the rest is the seed verbatim.
        static final String host = System.getenv("REDIS_HOST");
        static final int port = Integer.parseInt(System.getenv("REDIS_PORT"));
        static final String password = System.getenv("REDIS_PASSWORD");
        public static void main(String[] args) {
            Jedis jedis = new Jedis(host, port);
                // The password of the ApsaraDB for Redis instance.
                String authString = jedis.auth(password);// password
                if (!authString.equals("OK")) {
                    System.err.println("AUTH Failed: " + authString);
                    jedis.close();
                    return;
                }
                String key = "KVStore-Test1";
                jedis.del(key);// Initialize the key.
                //-------- Method 1
                Pipeline p1 = jedis.pipelined();
                System.out.println("-----Method 1-----");
                for (int i = 0; i < 5; i++) {
                    p1.incr(key);
                    System.out.println("Pipeline sends requests");
                }
                // After pipeline sends all requests, the client starts to receive responses.
                System.out.println("Sending requests completed. Start to receive responses");
                List<Object> responses = p1.syncAndReturnAll();
                if (responses == null || responses.isEmpty()) {
                    jedis.close();
                    throw new RuntimeException("Pipeline error: no responses received");
                }
                for (Object resp : responses) {
                    System.out.println("Pipeline receives response: " + resp.toString());
                }
                System.out.println();
                //-------- Method 2
                System.out.println("-----Method 2-----");
                jedis.del(key);// Initialize the key.
                Pipeline p2 = jedis.pipelined();  
                // Declare the responses first.
                Response<Long> r1 = p2.incr(key); 
                System.out.println("Pipeline sends requests");
                Response<Long> r2 = p2.incr(key);
                System.out.println("Pipeline sends requests");
                Response<Long> r3 = p2.incr(key);
                System.out.println("Pipeline sends requests");
                Response<Long> r4 = p2.incr(key);  
                System.out.println("Pipeline sends requests");
                Response<Long> r5 = p2.incr(key);
                System.out.println("Pipeline sends requests");
                try{  
                    r1.get(); // Errors occur because the client has not started to receive responses.
                }catch(Exception e){  
                    System.out.println(" <<< Pipeline error: the client has not started to receive responses  >>> ");  
                }  
             // After pipeline sends all requests, the client starts to receive responses.
                System.out.println("Sending requests completed. Start to receive responses");
                p2.sync();  
                System.out.println("Pipeline receives response: " + r1.get());  
                System. out. println ("Pipeline receives response: " + r2.get ());  
                System. out. println ("Pipeline receives response: " + r3.get ());
                System. out. println ("Pipeline receives response: " + r4.get ());
                System. out. println ("Pipeline receives response: " + r5.get ());
                jedis.close();
            }
    }
