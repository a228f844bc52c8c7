//! Black-box tests of the GEO commands over real TCP. Raw replies were
//! recorded from redis-server 7.0.15 (RESP2 and RESP3); the scenarios
//! mirror Redis's own geo unit (edge responses, option conflicts, pole and
//! antimeridian searches, box corners, fuzzed radius and box searches
//! against an independent haversine), plus WATCH and AOF behaviour.
mod aof_support;
mod common;
use aof_support::*;
use common::*;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const SYNTAX: &str = "ERR syntax error";

fn strs(items: &[&str]) -> Frame {
    arr(items.iter().map(|s| bulk(s)).collect())
}

/// The NYC places of Redis's geo unit.
fn nyc(c: &mut Client) {
    let args = [
        "GEOADD",
        "nyc",
        "-73.9454966",
        "40.747533",
        "lic market",
        "-73.9733487",
        "40.7648057",
        "central park n/q/r",
        "-73.9903085",
        "40.7362513",
        "union square",
        "-74.0131604",
        "40.7126674",
        "wtc one",
        "-73.7858139",
        "40.6428986",
        "jfk",
        "-73.9375699",
        "40.7498929",
        "q4",
        "-73.9564142",
        "40.7480973",
        "4545",
    ];
    assert_eq!(c.cmd(&args), int(7));
}

#[test]
fn geoadd_scores_options_and_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    nyc(&mut c);
    assert_eq!(
        c.raw_cmd(&["ZRANGE", "nyc", "0", "2", "WITHSCORES"]),
        b"*6\r\n$7\r\nwtc one\r\n$16\r\n1791873972053020\r\n$12\r\nunion square\r\n$16\r\n1791875485187452\r\n\
$18\r\ncentral park n/q/r\r\n$16\r\n1791875761332224\r\n"
    );
    assert_eq!(c.cmd(&["GEOADD", "nyc", "-73.9454966", "40.747533", "lic market"]), int(0));
    assert_eq!(c.cmd(&["GEOADD", "nyc", "CH", "40.747533", "-73.9454966", "lic market"]), int(1));
    assert_eq!(c.cmd(&["GEOADD", "nyc", "NX", "-73.9454966", "40.747533", "lic market"]), int(0));
    assert_eq!(c.cmd(&["GEOADD", "nyc", "XX", "-83.9454966", "40.747533", "lic market", "1", "1", "new"]), int(0));
    assert_eq!(c.cmd(&["ZSCORE", "nyc", "new"]), Frame::Null);
    assert_eq!(c.cmd(&["GEOADD", "nyc", "CH", "NX", "-73.9454966", "40.747533", "lic market"]), int(0));
    assert_eq!(c.cmd(&["GEOADD", "nyc", "CH", "XX", "-73.9454966", "40.747533", "lic market"]), int(1));
    // One member twice: added, then updated.
    assert_eq!(c.cmd(&["GEOADD", "twice", "ch", "1", "1", "m", "2", "2", "m"]), int(2));
    assert_eq!(c.cmd(&["GEOADD", "nokey", "xx", "1", "1", "m"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "nokey"]), int(0));
    let cases: &[(&[&str], &str)] = &[
        (&["GEOADD", "nyc", "xx", "nx", "1", "1", "m"], SYNTAX),
        (&["GEOADD", "nyc", "ch", "xx", "foo", "1", "1", "m"], SYNTAX),
        (&["GEOADD", "nyc", "gt", "1", "1", "m"], SYNTAX),
        (&["GEOADD", "nyc", "1", "1", "m", "ch"], SYNTAX),
        (&["GEOADD", "nyc", "xx", "ch", "ch"], SYNTAX),
        (&["GEOADD", "nyc", "1", "1", "m", "foo", "bar", "luck"], "ERR value is not a valid float"),
        (&["GEOADD", "nyc", "200", "100", "m"], "ERR invalid longitude,latitude pair 200.000000,100.000000"),
        (&["GEOADD", "nyc", "inf", "1", "m"], "ERR invalid longitude,latitude pair inf,1.000000"),
        (&["GEOADD", "nyc", "1", "-85.06", "m"], "ERR invalid longitude,latitude pair 1.000000,-85.060000"),
        (&["GEOADD", "nyc", "1", "1e400", "m"], "ERR value is not a valid float"),
        (&["GEOADD", "nyc", "1", "1"], "ERR wrong number of arguments for 'geoadd' command"),
    ];
    for (cmd, e) in cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["SET", "s", "x"]), ok());
    assert_eq!(c.cmd(&["GEOADD", "s", "1", "1", "m"]), err(WRONGTYPE));
    // Coordinates are checked before the key's type.
    assert_eq!(
        c.cmd(&["GEOADD", "s", "1", "100", "m"]),
        err("ERR invalid longitude,latitude pair 1.000000,100.000000")
    );
}

#[test]
fn searches_reply_like_redis_in_resp2_and_resp3() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    nyc(&mut c);
    let around = ["GEORADIUS", "nyc", "-73.9798091", "40.7598464"];
    let with = |extra: &[&'static str]| [&around[..], extra].concat();
    assert_eq!(c.cmd(&with(&["3", "km", "asc"])), strs(&["central park n/q/r", "4545", "union square"]));
    assert_eq!(c.cmd(&with(&["10", "km", "COUNT", "3"])), strs(&["central park n/q/r", "4545", "union square"]));
    assert_eq!(
        c.cmd(&with(&["10", "km", "COUNT", "3", "ANY"])),
        strs(&["wtc one", "union square", "central park n/q/r"])
    );
    assert_eq!(
        c.cmd(&with(&["10", "km", "COUNT", "3", "ANY", "ASC"])),
        strs(&["central park n/q/r", "union square", "wtc one"])
    );
    assert_eq!(c.cmd(&with(&["10", "km", "COUNT", "2", "DESC"])), strs(&["wtc one", "q4"]));
    let full = with(&["3", "km", "WITHCOORD", "WITHDIST", "WITHHASH", "ASC"]);
    let resp2: &[u8] = b"*3\r\n*4\r\n$18\r\ncentral park n/q/r\r\n$6\r\n0.7750\r\n:1791875761332224\r\n*2\r\n\
$21\r\n-73.97334784269332886\r\n$20\r\n40.76480639569881959\r\n*4\r\n$4\r\n4545\r\n$6\r\n2.3651\r\n\
:1791875796750882\r\n*2\r\n$21\r\n-73.95641237497329712\r\n$20\r\n40.74809751381645384\r\n*4\r\n\
$12\r\nunion square\r\n$6\r\n2.7697\r\n:1791875485187452\r\n*2\r\n$21\r\n-73.99031013250350952\r\n\
$20\r\n40.73625022711770782\r\n";
    assert_eq!(c.raw_cmd(&full), resp2);
    assert_eq!(
        c.raw_cmd(&[
            "GEOSEARCH",
            "nyc",
            "FROMMEMBER",
            "wtc one",
            "BYBOX",
            "14",
            "14",
            "km",
            "WITHDIST",
            "COUNT",
            "2",
            "DESC"
        ]),
        b"*2\r\n*2\r\n$2\r\nq4\r\n$6\r\n7.5983\r\n*2\r\n$10\r\nlic market\r\n$6\r\n6.8969\r\n"
    );
    assert_eq!(
        c.raw_cmd(&["GEOPOS", "nyc", "jfk", "nosuch"]),
        b"*2\r\n*2\r\n$21\r\n-73.78581315279006958\r\n$20\r\n40.64289898154041936\r\n*-1\r\n"
    );
    assert_eq!(c.raw_cmd(&["GEOHASH", "nyc", "jfk", "nosuch"]), b"*2\r\n$11\r\ndr5x0yyf1c0\r\n$-1\r\n");
    assert_eq!(c.raw_cmd(&["GEODIST", "nyc", "jfk", "q4", "mi"]), b"$7\r\n10.8590\r\n");
    c.raw_cmd(&["HELLO", "3"]);
    // Coordinates become RESP3 doubles; distances stay bulk strings.
    let resp3 = String::from_utf8_lossy(resp2).replace("$21\r\n-73.", ",-73.").replace("$20\r\n40.", ",40.");
    assert_eq!(String::from_utf8(c.raw_cmd(&full)).unwrap(), resp3);
    assert_eq!(
        c.raw_cmd(&["GEOPOS", "nyc", "jfk", "nosuch"]),
        b"*2\r\n*2\r\n,-73.78581315279006958\r\n,40.64289898154041936\r\n_\r\n"
    );
    assert_eq!(c.raw_cmd(&["GEOHASH", "nyc", "jfk", "nosuch"]), b"*2\r\n$11\r\ndr5x0yyf1c0\r\n_\r\n");
    assert_eq!(c.raw_cmd(&["GEODIST", "nyc", "jfk", "nosuch"]), b"_\r\n");
    assert_eq!(c.raw_cmd(&["GEORADIUS", "nokey", "1", "1", "1", "km"]), b"*0\r\n");
}

#[test]
fn search_option_errors() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    nyc(&mut c);
    let at = |rest: &[&'static str]| [&["GEOSEARCH", "nyc", "fromlonlat", "1", "2"][..], rest].concat();
    let radius = |rest: &[&'static str]| [&["GEORADIUS", "nyc", "1", "2"][..], rest].concat();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (radius(&["3", "yd"]), "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (radius(&["-3", "km"]), "ERR radius cannot be negative"),
        (radius(&["abc", "km"]), "ERR need numeric radius"),
        (radius(&["3", "km", "count", "0"]), "ERR COUNT must be > 0"),
        (radius(&["3", "km", "count", "x"]), "ERR value is not an integer or out of range"),
        (radius(&["3", "km", "count"]), SYNTAX),
        (radius(&["3", "km", "store"]), SYNTAX),
        (radius(&["3", "km", "any"]), "ERR the ANY argument requires COUNT argument"),
        (
            radius(&["3", "km", "store", "x", "withdist"]),
            "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
        ),
        (vec!["GEORADIUS_RO", "nyc", "1", "2", "3", "km", "store", "x"], SYNTAX),
        (vec!["GEORADIUSBYMEMBER", "nyc", "nosuch", "abc", "km"], "ERR could not decode requested zset member"),
        (vec!["GEORADIUSBYMEMBER", "nyc", "jfk", "abc", "km"], "ERR need numeric radius"),
        (at(&["bybox", "1", "abc", "km"]), "ERR need numeric height"),
        (at(&["bybox", "abc", "abc", "km"]), "ERR need numeric width"),
        (at(&["bybox", "-1", "1", "km"]), "ERR height or width cannot be negative"),
        (at(&["byradius", "3", "km", "bybox", "3", "3", "km"]), SYNTAX),
        (at(&["frommember", "jfk", "byradius", "1", "km"]), SYNTAX),
        (at(&["byradius", "1", "km", "storedist"]), SYNTAX),
        (at(&["byradius", "1", "km", "store", "x"]), SYNTAX),
        (
            vec!["geoSearch", "nyc", "bybox", "3", "3", "km", "asc", "withdist"],
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geoSearch",
        ),
        (at(&["asc", "desc", "withhash"]), "ERR exactly one of BYRADIUS and BYBOX can be specified for GEOSEARCH"),
        (
            vec!["GEOSEARCH", "nyc", "frommember", "nosuch", "bybox", "1", "1", "km"],
            "ERR could not decode requested zset member",
        ),
        (
            vec!["GEOSEARCHSTORE", "d", "nyc", "fromlonlat", "1", "2", "byradius", "1", "km", "withcoord"],
            "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
        ),
        (vec!["GEOSEARCHSTORE", "d", "nyc", "fromlonlat", "1", "2", "byradius", "1", "km", "store", "d"], SYNTAX),
        (vec!["GEODIST", "nyc", "jfk", "q4", "yd"], "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (vec!["GEODIST", "nyc", "jfk", "q4", "km", "x"], SYNTAX),
    ];
    for (cmd, e) in &cases {
        assert_eq!(c.cmd(cmd), err(e), "{cmd:?}");
    }
    // Later options may repeat earlier ones: the last FROMMEMBER and BYRADIUS win.
    let repeated =
        ["GEOSEARCH", "nyc", "frommember", "q4", "frommember", "jfk", "byradius", "1", "m", "byradius", "1", "km"];
    assert_eq!(c.cmd(&repeated), strs(&["jfk"]));
}

#[test]
fn missing_and_wrong_type_sources() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let searches: [&[&str]; 8] = [
        &["GEORADIUS", "src", "1", "1", "1", "km"],
        &["GEORADIUS", "src", "1", "1", "1", "km", "store", "dest"],
        &["GEOSEARCH", "src", "fromlonlat", "0", "0", "byradius", "1", "km"],
        &["GEOSEARCHSTORE", "dest", "src", "fromlonlat", "0", "0", "byradius", "1", "km"],
        &["GEORADIUSBYMEMBER", "src", "member", "1", "km"],
        &["GEORADIUSBYMEMBER", "src", "member", "1", "km", "store", "dest"],
        &["GEOSEARCH", "src", "frommember", "member", "bybox", "1", "1", "km"],
        &["GEOSEARCHSTORE", "dest", "src", "frommember", "member", "bybox", "1", "1", "m"],
    ];
    assert_eq!(c.cmd(&["SET", "src", "wrong_type"]), ok());
    for cmd in &searches {
        assert_eq!(c.cmd(cmd), err(WRONGTYPE), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["GEOPOS", "src", "a"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["GEOHASH", "src", "a"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["GEODIST", "src", "a", "b"]), err(WRONGTYPE));
    assert_eq!(c.cmd(&["DEL", "src"]), int(1));
    for cmd in &searches {
        // A STORE to a missing source deletes the destination.
        assert_eq!(c.cmd(&["SET", "dest", "x"]), ok());
        let stores = cmd.iter().any(|a| a.eq_ignore_ascii_case("store")) || cmd[0] == "GEOSEARCHSTORE";
        assert_eq!(c.cmd(cmd), if stores { int(0) } else { arr(vec![]) }, "{cmd:?}");
        assert_eq!(c.cmd(&["EXISTS", "dest"]), int(i64::from(!stores)), "{cmd:?}");
    }
    // Without a key, BYMEMBER's radius and unit are not even read.
    assert_eq!(c.cmd(&["GEORADIUSBYMEMBER", "src", "m", "abc", "xyz"]), arr(vec![]));
    assert_eq!(c.cmd(&["GEOPOS", "src", "a", "b"]), arr(vec![Frame::Null, Frame::Null]));
    assert_eq!(c.cmd(&["GEODIST", "src", "a", "b"]), Frame::Null);
    assert_eq!(
        c.cmd(&["GEOADD", "src", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]),
        int(2)
    );
    for cmd in &searches[..4] {
        let stores = cmd.iter().any(|a| a.eq_ignore_ascii_case("store")) || cmd[0] == "GEOSEARCHSTORE";
        assert_eq!(c.cmd(cmd), if stores { int(0) } else { arr(vec![]) }, "empty search {cmd:?}");
    }
    for cmd in &searches[4..] {
        assert_eq!(c.cmd(cmd), err("ERR could not decode requested zset member"), "{cmd:?}");
    }
}

#[test]
fn positions_hashes_and_distances() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["GEOADD", "points", "-5.6", "42.6", "test", "10", "20", "a", "30", "40", "b"]), int(3));
    assert_eq!(c.cmd(&["GEOHASH", "points", "test"]), strs(&["ezs42e44yx0"]));
    assert_eq!(c.raw_cmd(&["GEOPOS", "points", "a", "x", "b"]), b"*3\r\n*2\r\n$20\r\n10.00000208616256714\r\n$20\r\n20.00000058910486445\r\n*-1\r\n*2\r\n$20\r\n30.00000089406967163\r\n$20\r\n39.99999991084916218\r\n".to_vec());
    assert_eq!(
        c.cmd(&["GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]),
        int(2)
    );
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania"]), bulk("166274.1516"));
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "KM"]), bulk("166.2742"));
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "mi"]), bulk("103.3182"));
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "ft"]), bulk("545518.8700"));
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Palermo"]), bulk("0.0000"));
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "Agrigento"]), Frame::Null);
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Ragusa", "Agrigento"]), Frame::Null);
    // Scores GEOADD never writes still decode, as x86 converts them.
    assert_eq!(c.cmd(&["ZADD", "odd", "-inf", "ninf", "inf", "pinf", "1.5", "frac"]), int(3));
    assert_eq!(
        c.raw_cmd(&["GEOPOS", "odd", "ninf", "pinf"]),
        b"*2\r\n*2\r\n$3\r\n180\r\n$21\r\n-85.05112751263942528\r\n*2\r\n$22\r\n-179.99999731779098511\r\n$21\r\n-85.05112751263942528\r\n".to_vec()
    );
    assert_eq!(c.cmd(&["GEOHASH", "odd", "ninf", "frac"]), strs(&["00bh0hbj200", "00bh0hbj210"]));
}

#[test]
fn searches_near_poles_antimeridian_and_box_edges() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    // Neighbour cells in oblique directions and across the pole are scanned.
    let pole_cases: [(&[&str], &str, &str); 4] = [
        (&["-0.15307903289794921875", "85", "n1", "0.3515625", "85.00019260486917005437", "n2"], "n1", "4891.94"),
        (&["-4.95211958885192871094", "85", "n1", "11.25", "85.0511", "n2"], "n1", "156544"),
        (&["-45", "65.50900022111811438208", "n1", "90", "85.0511", "n2"], "n1", "5009431"),
        (&["45", "65", "n1", "-135", "85.05", "n2"], "n1", "5009431"),
    ];
    for (points, from, radius) in pole_cases {
        c.cmd(&["DEL", "k"]);
        assert_eq!(c.cmd(&[&["GEOADD", "k"][..], points].concat()), int(2));
        assert_eq!(c.cmd(&["GEORADIUSBYMEMBER", "k", from, radius, "m"]), strs(&["n1", "n2"]), "{points:?}");
    }
    assert_eq!(
        c.raw_cmd(&["GEORADIUSBYMEMBER", "k", "n1", "5009431", "m", "withdist"]),
        b"*2\r\n*2\r\n$2\r\nn1\r\n$6\r\n0.0000\r\n*2\r\n$2\r\nn2\r\n$12\r\n3331227.6970\r\n"
    );
    assert_eq!(c.cmd(&["GEOADD", "users", "-47.271613776683807", "-54.534504198047678", "user_000000"]), int(1));
    assert_eq!(
        c.raw_cmd(&["GEORADIUS", "users", "0", "0", "50000", "km", "WITHCOORD"]),
        b"*1\r\n*2\r\n$11\r\nuser_000000\r\n*2\r\n$21\r\n-47.27161377668380737\r\n$20\r\n-54.5345041980476779\r\n"
    );
    // Boxes spanning the antimeridian.
    assert_eq!(c.cmd(&["GEOADD", "w", "179.5", "36", "point1", "-179.5", "36", "point2"]), int(2));
    assert_eq!(
        c.raw_cmd(&["GEOSEARCH", "w", "fromlonlat", "179", "37", "bybox", "400", "400", "km", "asc", "withdist"]),
        b"*2\r\n*2\r\n$6\r\npoint1\r\n$8\r\n119.8737\r\n*2\r\n$6\r\npoint2\r\n$8\r\n174.2313\r\n"
    );
    assert_eq!(
        c.cmd(&["GEOSEARCH", "w", "fromlonlat", "-179", "37", "bybox", "400", "400", "km", "asc"]),
        strs(&["point2", "point1"])
    );
    // Short distances keep four decimals.
    assert_eq!(c.cmd(&["GEOADD", "sf", "-122.407107", "37.794300", "1", "-122.227336", "37.794300", "2"]), int(2));
    assert_eq!(
        c.cmd(&["GEORADIUS", "sf", "-122.407107", "37.794300", "30", "mi", "ASC", "WITHDIST"]),
        arr(vec![strs(&["1", "0.0001"]), strs(&["2", "9.8182"])])
    );
    // A box's corners bulge poleward: only the points inside count.
    let corners = [
        "GEOADD",
        "Sicily",
        "12.758489",
        "38.788135",
        "edge1",
        "17.241510",
        "38.788135",
        "edge2",
        "17.250000",
        "35.202000",
        "edge3",
        "12.750000",
        "35.202000",
        "edge4",
        "12.748489955781654",
        "37",
        "edge5",
        "15",
        "38.798135872540925",
        "edge6",
        "17.251510044218346",
        "37",
        "edge7",
        "15",
        "35.201864127459075",
        "edge8",
        "12.692799634687903",
        "38.798135872540925",
        "corner1",
        "12.692799634687903",
        "38.798135872540925",
        "corner2",
        "17.200560937451133",
        "35.201864127459075",
        "corner3",
        "12.799439062548865",
        "35.201864127459075",
        "corner4",
    ];
    assert_eq!(c.cmd(&corners), int(12));
    let box400 = ["GEOSEARCH", "Sicily", "fromlonlat", "15", "37", "bybox", "400", "400", "km", "asc"];
    let Frame::Array(found) = c.cmd(&box400) else { panic!() };
    let mut names: Vec<Frame> = found;
    names.sort_by_key(|f| format!("{f:?}"));
    assert_eq!(names, vec![bulk("edge1"), bulk("edge2"), bulk("edge5"), bulk("edge7")]);
    // Long and narrow boxes.
    c.cmd(&["DEL", "Sicily"]);
    c.cmd(&["GEOADD", "Sicily", "12.75", "36.995", "test1", "12.75", "36.50", "test2", "13.00", "36.50", "test3"]);
    assert_eq!(c.cmd(&["GEOSEARCH", "Sicily", "fromlonlat", "15", "37", "bybox", "400", "2", "km"]), strs(&["test1"]));
    c.cmd(&["GEOADD", "Sicily", "-1", "37.00", "test3"]);
    assert_eq!(
        c.cmd(&["GEOSEARCH", "Sicily", "fromlonlat", "15", "37", "bybox", "3000", "2", "km", "asc"]),
        strs(&["test1", "test3"])
    );
}

#[test]
fn equal_distances_with_count_come_back_in_redis_order() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    for i in 0..10 {
        let (a, b) = (format!("a{i}"), format!("b{i}"));
        assert_eq!(c.cmd(&["GEOADD", "t", "0.01", "0", &a, "0.02", "0", &b]), int(2));
    }
    let cases: [(&[&str], &str); 5] = [
        (&["COUNT", "3"], "a0 a2 a3"),
        (&["COUNT", "3", "DESC"], "b9 b0 b1"),
        (&["COUNT", "12"], "a0 a2 a3 a4 a5 a6 a7 a8 a9 a1 b9 b0"),
        (&["COUNT", "12", "DESC"], "b9 b0 b1 b2 b3 b4 b5 b6 b7 b8 a9 a1"),
        (&["DESC"], "b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 a0 a1 a2 a3 a4 a5 a6 a7 a8 a9"),
    ];
    for (opts, want) in cases {
        let cmd = [&["GEORADIUS", "t", "0", "0", "100", "km"][..], opts].concat();
        let want: Vec<&str> = want.split(' ').collect();
        assert_eq!(c.cmd(&cmd), strs(&want), "{opts:?}");
    }
}

#[test]
fn store_forms_replace_the_destination() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    c.cmd(&["GEOADD", "points", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]);
    assert_eq!(c.cmd(&["SET", "points2", "x", "EX", "100"]), ok());
    assert_eq!(c.cmd(&["GEORADIUS", "points", "13.361389", "38.115556", "500", "km", "storedist", "points2"]), int(2));
    assert_eq!(
        c.raw_cmd(&["ZRANGE", "points2", "0", "-1", "WITHSCORES"]),
        b"*4\r\n$7\r\nPalermo\r\n$22\r\n5.3056374386009927e-05\r\n$7\r\nCatania\r\n$18\r\n166.27416107465282\r\n"
    );
    assert_eq!(c.cmd(&["TTL", "points2"]), int(-1));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "points2"]), bulk("listpack"));
    let store = ["GEORADIUSBYMEMBER", "points", "Palermo", "500", "km", "store", "points2", "count", "1", "desc"];
    assert_eq!(c.cmd(&store), int(1));
    assert_eq!(c.cmd(&["ZRANGE", "points2", "0", "-1", "WITHSCORES"]), strs(&["Catania", "3479447370796909"]));
    // The last STORE/STOREDIST names the destination and the scores.
    let both = ["GEORADIUS", "points", "15", "37", "200", "km", "storedist", "a", "store", "b"];
    assert_eq!(c.cmd(&both), int(2));
    assert_eq!(c.cmd(&["EXISTS", "a"]), int(0));
    assert_eq!(c.cmd(&["ZRANGE", "b", "0", "-1"]), c.cmd(&["ZRANGE", "points", "0", "-1"]));
    let storedist =
        ["GEOSEARCHSTORE", "points3", "points", "fromlonlat", "15", "37", "byradius", "100", "km", "storedist"];
    assert_eq!(c.cmd(&storedist), int(1));
    assert_eq!(c.cmd(&["ZRANGE", "points3", "0", "-1", "WITHSCORES"]), strs(&["Catania", "56.441257870158204"]));
    assert_eq!(
        c.cmd(&["GEOSEARCHSTORE", "points3", "points", "fromlonlat", "15", "37", "byradius", "1", "km"]),
        int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", "points3"]), int(0));
    // Results past the listpack limits are stored as a skiplist.
    let mut args: Vec<String> = vec!["GEOADD".into(), "many".into()];
    for i in 0..130 {
        args.extend([format!("{}", 10.0 + i as f64 / 1000.0), "20".into(), format!("m{i}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args), int(130));
    let big = ["GEOSEARCHSTORE", "big", "many", "fromlonlat", "10", "20", "bybox", "100", "100", "km"];
    assert_eq!(c.cmd(&big), int(130));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "big"]), bulk("skiplist"));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "many"]), bulk("skiplist"));
    let small =
        ["GEOSEARCHSTORE", "small", "many", "fromlonlat", "10", "20", "bybox", "100", "100", "km", "count", "128"];
    assert_eq!(c.cmd(&small), int(128));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "small"]), bulk("listpack"));
}

#[test]
fn watch_sees_exactly_the_keys_geo_writes_change() {
    let srv = TestServer::start(&[]);
    let (mut c, mut other) = (srv.client(), srv.client());
    c.cmd(&["GEOADD", "src", "13.361389", "38.115556", "Palermo"]);
    let run_watched = |c: &mut Client, other: &mut Client, key: &str, write: &[&str]| {
        assert_eq!(c.cmd(&["WATCH", key]), ok());
        other.cmd(write);
        assert_eq!(c.cmd(&["MULTI"]), ok());
        assert_eq!(c.cmd(&["PING"]), simple("QUEUED"));
        c.cmd(&["EXEC"])
    };
    let aborted = Frame::Null;
    let store = ["GEORADIUS", "src", "13", "38", "100", "km", "store", "dst"];
    assert_eq!(run_watched(&mut c, &mut other, "dst", &store), aborted);
    assert_eq!(run_watched(&mut c, &mut other, "src", &store), arr(vec![simple("PONG")]), "the source is only read");
    assert_eq!(run_watched(&mut c, &mut other, "src", &["GEOADD", "src", "1", "1", "m"]), aborted);
    let same = ["GEOADD", "src", "1", "1", "m"];
    assert_eq!(run_watched(&mut c, &mut other, "src", &same), arr(vec![simple("PONG")]), "nothing changed");
    let empty = ["GEOSEARCHSTORE", "dst", "src", "fromlonlat", "0", "0", "byradius", "1", "m"];
    assert_eq!(run_watched(&mut c, &mut other, "dst", &empty), aborted, "deleted");
    assert_eq!(run_watched(&mut c, &mut other, "dst", &empty), arr(vec![simple("PONG")]), "already gone");
}

#[test]
fn aof_replays_geoadd_as_zadd_and_store_searches_verbatim() {
    let dir = DataDir::new("geo");
    let mut srv = start_aof(&dir, &["--appendfsync", "always"]);
    let mut c = srv.client();
    assert_eq!(
        c.cmd(&["GEOADD", "pts", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"]),
        int(2)
    );
    assert_eq!(c.cmd(&["GEOADD", "pts", "CH", "xx", "13.361389", "38.115556", "Palermo"]), int(0));
    assert_eq!(c.cmd(&["GEORADIUS", "pts", "15", "37", "200", "km", "store", "dst"]), int(2));
    assert_eq!(c.cmd(&["GEORADIUS", "pts", "15", "37", "200", "km"]), strs(&["Palermo", "Catania"]));
    let search = ["geosearchstore", "d3", "pts", "fromlonlat", "15", "37", "byradius", "200", "km", "storedist"];
    assert_eq!(c.cmd(&search), int(2));
    assert_eq!(c.cmd(&["GEORADIUS", "nokey", "15", "37", "200", "km", "store", "dst"]), int(0));
    let incr = std::fs::read_to_string(dir.last_incr()).unwrap();
    let want =
        "*6\r\n$4\r\nzadd\r\n$3\r\npts\r\n$16\r\n3479099956230698\r\n$7\r\nPalermo\r\n$16\r\n3479447370796909\r\n\
$7\r\nCatania\r\n*8\r\n$9\r\nGEORADIUS\r\n$3\r\npts\r\n$2\r\n15\r\n$2\r\n37\r\n$3\r\n200\r\n$2\r\nkm\r\n$5\r\nstore\r\n\
$3\r\ndst\r\n*10\r\n$14\r\ngeosearchstore\r\n$2\r\nd3\r\n$3\r\npts\r\n$10\r\nfromlonlat\r\n$2\r\n15\r\n$2\r\n37\r\n\
$8\r\nbyradius\r\n$3\r\n200\r\n$2\r\nkm\r\n$9\r\nstoredist\r\n*8\r\n$9\r\nGEORADIUS\r\n$5\r\nnokey\r\n$2\r\n15\r\n\
$2\r\n37\r\n$3\r\n200\r\n$2\r\nkm\r\n$5\r\nstore\r\n$3\r\ndst\r\n";
    assert!(incr.ends_with(want), "{incr:?}");
    let before = c.cmd(&["ZRANGE", "d3", "0", "-1", "WITHSCORES"]);
    kill9(&mut srv);
    let srv = start_aof(&dir, &[]);
    let mut c = srv.client();
    assert_eq!(c.cmd(&["ZRANGE", "d3", "0", "-1", "WITHSCORES"]), before);
    assert_eq!(c.cmd(&["EXISTS", "dst"]), int(0));
    assert_eq!(c.cmd(&["GEOHASH", "pts", "Palermo"]), strs(&["sqc8b49rny0"]));
}

/// Haversine in meters, written independently of the server's.
fn haversine(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let (dlat, dlon) = ((lat2 - lat1).to_radians(), (lon2 - lon1).to_radians());
    let a = (dlat / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * 6372797.560856 * a.sqrt().asin()
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn text(f: &Frame) -> f64 {
    match f {
        Frame::Bulk(b) => std::str::from_utf8(b).unwrap().parse().unwrap(),
        other => panic!("not a coordinate: {other:?}"),
    }
}

/// Random radius and box searches (centres within ±70° of latitude, where
/// the nine cells always cover the area) find exactly the points an
/// independent haversine puts inside, up to float rounding at the border.
#[test]
fn fuzzed_searches_match_an_independent_model() {
    let srv = TestServer::start(&[]);
    let mut c = srv.client();
    let mut rng = Rng(0x5eed);
    let mut total_found = 0;
    for round in 0..24 {
        c.cmd(&["DEL", "pts"]);
        let (clon, clat) = (-180.0 + rng.unit() * 360.0, -70.0 + rng.unit() * 140.0);
        let scale = if rng.unit() < 0.1 { 5000.0 } else { 200.0 };
        let (w, h) = (10.0 + (rng.unit() * scale).floor(), 10.0 + (rng.unit() * scale).floor());
        // Two thirds of the points around the area (so its borders are
        // crowded), the rest anywhere.
        let reach = w.max(h) * 2.0 / 111.0;
        let mut args: Vec<String> = vec!["GEOADD".into(), "pts".into()];
        for j in 0..3000 {
            let (lon, lat) = if j % 3 == 0 {
                (-180.0 + rng.unit() * 360.0, -70.0 + rng.unit() * 140.0)
            } else {
                let lat: f64 = (clat + (rng.unit() - 0.5) * 2.0 * reach).clamp(-80.0, 80.0);
                let lon = clon + (rng.unit() - 0.5) * 2.0 * (reach / lat.to_radians().cos()).min(180.0);
                (
                    if lon > 180.0 {
                        lon - 360.0
                    } else if lon < -180.0 {
                        lon + 360.0
                    } else {
                        lon
                    },
                    lat,
                )
            };
            args.extend([lon.to_string(), lat.to_string(), format!("p{j}")]);
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&refs), int(3000));
        let members: Vec<String> = (0..3000).map(|j| format!("p{j}")).collect();
        let pos_cmd: Vec<&str> = ["GEOPOS", "pts"].into_iter().chain(members.iter().map(String::as_str)).collect();
        let Frame::Array(pos) = c.cmd(&pos_cmd) else { panic!() };
        let pos: Vec<(f64, f64)> = pos
            .iter()
            .map(|p| match p {
                Frame::Array(xy) => (text(&xy[0]), text(&xy[1])),
                other => panic!("{other:?}"),
            })
            .collect();
        let by_box = round % 2 == 1;
        // (member index, inside, how close to the border: 0 = on it)
        let model: Vec<(bool, f64)> = pos
            .iter()
            .map(|&(lon, lat)| {
                if by_box {
                    let dx = haversine(lon, lat, clon, lat) / (w * 500.0);
                    let dy = haversine(lon, lat, lon, clat) / (h * 500.0);
                    (dx <= 1.0 && dy <= 1.0, (dx - 1.0).abs().min((dy - 1.0).abs()))
                } else {
                    let d = haversine(lon, lat, clon, clat) / (w * 1000.0);
                    (d <= 1.0, (d - 1.0).abs())
                }
            })
            .collect();
        let (cl, ca, ws, hs) = (clon.to_string(), clat.to_string(), w.to_string(), h.to_string());
        let cmd: Vec<&str> = if by_box {
            vec!["GEOSEARCH", "pts", "FROMLONLAT", &cl, &ca, "BYBOX", &ws, &hs, "km"]
        } else {
            vec!["GEOSEARCH", "pts", "FROMLONLAT", &cl, &ca, "BYRADIUS", &ws, "km"]
        };
        let Frame::Array(found) = c.cmd(&cmd) else { panic!() };
        total_found += found.len();
        let mut got = vec![false; 3000];
        for f in &found {
            let Frame::Bulk(m) = f else { panic!() };
            got[std::str::from_utf8(&m[1..]).unwrap().parse::<usize>().unwrap()] = true;
        }
        for (j, &(inside, margin)) in model.iter().enumerate() {
            assert!(got[j] == inside || margin < 1e-9, "round {round} {cmd:?}: p{j} at {:?} inside={inside}", pos[j]);
        }
    }
    assert!(total_found > 1000, "the searches found too little to prove anything: {total_found}");
}
