//! Expectations recorded from redis-server 7.0.15 by `record_cases.py`
//! (generated; re-record rather than edit). Each reply is what
//! `redis-cli -p PORT eval "$PRELUDE <snippet>" 0` returned, with PRELUDE as
//! in `super::PRELUDE`. Integers are Redis's integer replies, `(nil)` a nil
//! reply, and errors are `ERR <Lua error message>` (Redis's ` script: <sha>,
//! on @user_script:1.` suffix dropped).

pub(super) const CASES: &[(&[u8], &[u8])] = &[
    (b"return J(bit.tobit(0xffffffff), bit.tobit(2^32+5), bit.tobit(-1), bit.tobit(2^31), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5), bit.tobit(0.5000001))", b"-1,5,-1,-2147483648,2,2,-2,1"),
    (b"return J(bit.tobit(2^52), bit.tobit(2^53+3), bit.tobit(2^60+12345), bit.tobit(-2^60-7), bit.tobit(1e300), bit.tobit(1/0), bit.tobit(0/0), bit.tobit(-1/0))", b"0,2,48,0,-2013235812,0,0,0"),
    (b"return J(bit.tobit(2^51), bit.tobit(2^51+1.5), bit.tobit(-2^51), bit.tobit(-2^51-1), bit.tobit(2^52-0.5), bit.tobit(5e-324), bit.tobit(-0.0))", b"0,1,0,-2,0,0,0"),
    (b"return J(bit.tohex(1), bit.tohex(-1), bit.tohex(255, 2), bit.tohex(255, -2), bit.tohex(0x1234, 10), bit.tohex(0x1234, -10), bit.tohex(255, 0), bit.tohex(255,1), bit.tohex(0xdeadbeef, -8))", b"00000001,ffffffff,ff,FF,00001234,00001234,,f,DEADBEEF"),
    (b"return J(bit.bnot(0), bit.bnot(-1), bit.bnot(0x12345678), bit.band(0xff, 0x0f, 0x3), bit.bor(1,2,4,8), bit.bxor(1,3,7), bit.band(5), bit.bor(6), bit.bxor(-1))", b"-1,0,-305419897,3,15,5,5,6,-1"),
    (b"return bit.bor()", b"ERR user_script:1: bad argument #1 to 'bor' (number expected, got no value)"),
    (b"return bit.band(1, {})", b"ERR user_script:1: bad argument #2 to 'band' (number expected, got table)"),
    (b"return bit.band(1, 'x')", b"ERR user_script:1: bad argument #2 to 'band' (number expected, got string)"),
    (b"return bit.band(1, {}, 'x')", b"ERR user_script:1: bad argument #3 to 'band' (number expected, got string)"),
    (b"return bit.band(nil, 1)", b"ERR user_script:1: bad argument #1 to 'band' (number expected, got nil)"),
    (b"return bit.band(1, '0x10', '3')", b"0"),
    (b"return bit.bor(0, 1/0)", b"0"),
    (b"return J(bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, 33), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rshift(0x80000000, 31), bit.lshift(1,-1), bit.arshift(0x80000000, 31), bit.rshift(5, 0))", b"-2147483648,1,2,15,-16,1,-2147483648,-1,5"),
    (b"return J(bit.rol(0x12345678, 4), bit.ror(0x12345678, 4), bit.rol(0x12345678, 0), bit.ror(1, 32), bit.bswap(0x12345678), bit.bswap(-1), bit.rol(1, 63), bit.ror(1, -1))", b"591751041,-2128394905,305419896,1,2018915346,-1,-2147483648,2"),
    (b"return bit.tohex(1, nil)", b"ERR user_script:1: bad argument #2 to 'tohex' (number expected, got nil)"),
    (b"return J(bit.tohex('10'), bit.tobit('0x7fffffff'), bit.tobit(' 12 '), bit.tobit('1e3'))", b"0000000a,2147483647,12,1000"),
    (b"return bit.tobit('12x')", b"ERR user_script:1: bad argument #1 to 'tobit' (number expected, got string)"),
    (b"return bit.tobit()", b"ERR user_script:1: bad argument #1 to 'tobit' (number expected, got no value)"),
    (b"return bit.lshift(1)", b"ERR user_script:1: bad argument #2 to 'lshift' (number expected, got no value)"),
    (b"return bit.rol()", b"ERR user_script:1: bad argument #1 to 'rol' (number expected, got no value)"),
    (b"return bit.bswap(true)", b"ERR user_script:1: bad argument #1 to 'bswap' (number expected, got boolean)"),
    (b"return bit.tohex({})", b"ERR user_script:1: bad argument #1 to 'tohex' (number expected, got table)"),
    (b"return J(bit.band(1.4, 3), bit.tobit(-0.5), bit.tobit(-2.5), bit.tobit(2^31+0.5), bit.tobit(4294967295.5))", b"1,0,-2,-2147483648,0"),
    (b"return bit.tohex(7, 2^32-3)", b"007"),
    (b"return bit.tohex(7, -9)", b"00000007"),
    (b"return bit.tohex(7, 9)", b"00000007"),
    (b"return J(bit.tohex(0xabcdef, -0), bit.tohex(0xabcdef, 2^32+4), bit.tohex(-2, 3))", b",cdef,ffe"),
    (b"return J(bit.tobit(0), bit.tobit('0'), bit.band(0, 0))", b"0,0,0"),
    (b"return J(bit.tobit(1, 2, 3), bit.bnot(1, 'x'))", b"1,-2"),
    (b"return bit.tobit('')", b"ERR user_script:1: bad argument #1 to 'tobit' (number expected, got string)"),
    (b"return J(pcall(bit.band, {}))", b"false,bad argument #1 to '?' (number expected, got table)"),
    (b"local b = bit.bor return b('x')", b"ERR user_script:1: bad argument #1 to 'b' (number expected, got string)"),
];
