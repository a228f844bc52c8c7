//! Key positions for commands whose keys follow a count argument (numkeys),
//! read from the real command table: what COMMAND GETKEYS, WATCH signals
//! and (later) ACL key checks and cluster routing see.
use volley::dispatch::keys::key_positions;

fn keys_of(words: &[&str]) -> Vec<usize> {
    let reg = volley::registry();
    let id = reg.find(words[0].as_bytes()).expect("known command");
    key_positions(reg.spec(id), words.len(), |i| words[i].as_bytes())
}

#[test]
fn numkeys_commands() {
    assert_eq!(keys_of(&["zunion", "2", "a", "b", "withscores"]), vec![2, 3]);
    assert_eq!(keys_of(&["zunionstore", "d", "2", "a", "b", "weights", "1", "2"]), vec![1, 3, 4]);
    assert_eq!(keys_of(&["blmpop", "0", "2", "a", "b", "left"]), vec![3, 4]);
    assert_eq!(keys_of(&["lmpop", "1", "a", "left"]), vec![2]);
}

#[test]
fn bad_counts_give_no_keys() {
    assert!(keys_of(&["zunion", "0", "a"]).is_empty());
    assert!(keys_of(&["zunion", "5", "a"]).is_empty());
    assert!(keys_of(&["zunion", "x", "a"]).is_empty());
    assert!(keys_of(&["lmpop", "-1", "a", "left"]).is_empty());
}

#[test]
fn fixed_keys_come_from_the_spec() {
    assert_eq!(keys_of(&["mset", "a", "1", "b", "2"]), vec![1, 3]);
    assert_eq!(keys_of(&["get", "a"]), vec![1]);
}
