# The Ruby benchmark from the Redis pipelining docs (project seed), verbatim
# except that Redis.new is pointed at REDIS_HOST / REDIS_PORT.
require 'rubygems'
require 'redis'

def bench(descr)
  start = Time.now
  yield
  puts "#{descr} #{Time.now - start} seconds"
end

def without_pipelining
  r = Redis.new(host: ENV['REDIS_HOST'], port: ENV['REDIS_PORT'].to_i)
  10_000.times do
    r.ping
  end
end

def with_pipelining
  r = Redis.new(host: ENV['REDIS_HOST'], port: ENV['REDIS_PORT'].to_i)
  r.pipelined do
    10_000.times do
      r.ping
    end
  end
end

bench('without pipelining') do
  without_pipelining
end
bench('with pipelining') do
  with_pipelining
end
