//! Cooks' accounts: sign up, log in, sessions and passwords, with secrets
//! kept beside the datoms and out of history.

use std::sync::{Arc, Barrier};

use forkful::domain::{AccountError, Accounts, Attempt, Change, ContentDraft, Recipes, Slug};
use forkful::store::export;
use forkful::store::Store;

use crate::helpers::stored;

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

fn accounts() -> (Recipes, Accounts) {
    let recipes = Recipes::open(Store::temporary().unwrap()).unwrap();
    let accounts = Accounts::open(&recipes).unwrap();
    (recipes, accounts)
}

const PASSWORD: &str = "correct horse battery";

#[test]
fn a_cook_signs_up_logs_in_and_out() {
    let (_, accounts) = accounts();
    let cook = accounts
        .sign_up(&slug("ann"), " Ann Smith ", PASSWORD)
        .unwrap();
    assert_eq!(cook.name, "Ann Smith");
    let (cook, session) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    assert_eq!(cook.handle, slug("ann"));
    assert_eq!(session.token.len(), 64, "256 bits, in hex");
    assert_eq!(accounts.session(&session.token).unwrap(), Some(cook));
    accounts.log_out(&session.token).unwrap();
    assert_eq!(accounts.session(&session.token).unwrap(), None);
    assert_eq!(accounts.session("not a token").unwrap(), None);
}

#[test]
fn a_wrong_password_and_an_unknown_handle_get_the_same_answer() {
    let (_, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    let wrong = accounts
        .log_in(&slug("ann"), "wrong password!")
        .unwrap_err();
    let unknown = accounts.log_in(&slug("nobody"), PASSWORD).unwrap_err();
    assert!(matches!(wrong, AccountError::BadCredentials));
    assert_eq!(wrong.to_string(), unknown.to_string());
}

#[test]
fn a_taken_handle_is_refused_whether_a_cook_or_an_author_has_it() {
    let (recipes, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    assert!(matches!(
        accounts.sign_up(&slug("ann"), "Another Ann", PASSWORD),
        Err(AccountError::HandleTaken(_))
    ));
    // An author of the seed has a cook entity but no password.
    recipes
        .create(
            &slug("soup"),
            ContentDraft {
                title: "Soup".into(),
                ..ContentDraft::default()
            },
            &Change::by("ben", "new"),
        )
        .unwrap();
    let before = stored(recipes.store());
    assert!(matches!(
        accounts.sign_up(&slug("ben"), "Ben", PASSWORD),
        Err(AccountError::HandleTaken(_))
    ));
    assert!(stored(recipes.store()) == before, "a refused sign-up wrote");
    assert!(matches!(
        accounts.log_in(&slug("ben"), PASSWORD),
        Err(AccountError::BadCredentials)
    ));
}

#[test]
fn a_name_is_kept_without_the_control_characters_nobody_sees() {
    let (_, accounts) = accounts();
    let cook = accounts
        .sign_up(&slug("ann"), "\u{0}Ann\u{1b}[31m Smith\n\u{7f}", PASSWORD)
        .unwrap();
    assert_eq!(cook.name, "Ann[31m Smith");
    assert_eq!(accounts.cook(&slug("ann")).unwrap().name, "Ann[31m Smith");
    let cook = accounts
        .sign_up(&slug("bo"), "Bo\nLee\t\t Park", PASSWORD)
        .unwrap();
    assert_eq!(cook.name, "Bo Lee Park", "a line break or a tab is a space");
}

#[test]
fn a_bad_sign_up_writes_nothing() {
    let (recipes, accounts) = accounts();
    let before = stored(recipes.store());
    for (name, password) in [
        ("Ann", "short"),
        ("", PASSWORD),
        ("\u{1b}\u{7}\n", PASSWORD),
        ("Ann", &"x".repeat(2_000)),
    ] {
        let error = accounts.sign_up(&slug("ann"), name, password).unwrap_err();
        assert!(matches!(error, AccountError::Invalid { .. }), "{error}");
    }
    assert!(stored(recipes.store()) == before);
}

#[test]
fn of_concurrent_sign_ups_with_one_handle_exactly_one_wins() {
    let (_, accounts) = accounts();
    let barrier = Arc::new(Barrier::new(6));
    let outcomes: Vec<_> = (0..6)
        .map(|i| {
            let (accounts, barrier) = (accounts.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                accounts
                    .sign_up(
                        &slug("ann"),
                        &format!("Ann {i}"),
                        &format!("{PASSWORD} {i}"),
                    )
                    .map(|cook| (i, cook.name))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let won: Vec<_> = outcomes.iter().filter_map(|o| o.as_ref().ok()).collect();
    assert_eq!(won.len(), 1, "{outcomes:?}");
    let (winner, name) = won[0];
    assert!(outcomes
        .iter()
        .filter_map(|o| o.as_ref().err())
        .all(|e| matches!(e, AccountError::HandleTaken(_))));
    assert_eq!(accounts.cook(&slug("ann")).unwrap().name, *name);
    accounts
        .log_in(&slug("ann"), &format!("{PASSWORD} {winner}"))
        .expect("the winner's password is the one kept");
}

#[test]
fn changing_the_password_ends_every_other_session() {
    let (_, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    let (_, laptop) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    let (_, phone) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    assert!(matches!(
        accounts.change_password(&slug("ann"), "not my password", "a new password"),
        Err(AccountError::BadCredentials)
    ));
    let here = accounts
        .change_password(&slug("ann"), PASSWORD, "a new password")
        .unwrap();
    assert_eq!(accounts.session(&laptop.token).unwrap(), None);
    assert_eq!(accounts.session(&phone.token).unwrap(), None);
    assert!(accounts.session(&here.token).unwrap().is_some());
    assert!(accounts.log_in(&slug("ann"), PASSWORD).is_err());
    accounts.log_in(&slug("ann"), "a new password").unwrap();
}

/// A password form sent again after its answer was lost (a dropped
/// connection, a 503 that could not tell) finds the password it set: the
/// change is done, not "your current password is wrong". Only that very
/// form, saying that very password, is told so.
#[test]
fn a_password_change_sent_again_is_done_and_answered_as_the_first_send() {
    let (recipes, accounts) = accounts();
    let ann = slug("ann");
    accounts.sign_up(&ann, "Ann", PASSWORD).unwrap();
    let (_, phone) = accounts.log_in(&ann, PASSWORD).unwrap();
    let form = Attempt::of(&[b"the account page, as shown once"]);
    let new = "a new password";
    let first = accounts
        .change_password_once(&ann, PASSWORD, new, Some(&form))
        .unwrap();
    let secrets = recipes.store().keyspace("secrets").unwrap();
    let stored = secrets.get(b"password/ann").unwrap().unwrap();
    let stored = String::from_utf8(stored.to_vec()).unwrap();
    assert!(
        stored.starts_with("$argon2id$") && stored.ends_with(&format!(" {}", form.as_str())),
        "the hash and the attempt that set it: {stored}"
    );
    // The first answer is lost; the same form comes again, its "current"
    // password the old one.
    let again = accounts
        .change_password_once(&ann, PASSWORD, new, Some(&form))
        .unwrap();
    assert!(accounts.session(&again.token).unwrap().is_some());
    for ended in [&phone, &first] {
        assert_eq!(accounts.session(&ended.token).unwrap(), None);
    }
    assert!(accounts.log_in(&ann, PASSWORD).is_err());
    accounts.log_in(&ann, new).unwrap();
    // Another form with the old password, and the same form saying
    // another new one, are what they always were: wrong.
    let other = Attempt::of(&[b"the account page, shown again"]);
    for (attempt, new) in [(&other, new), (&form, "yet another password")] {
        assert!(matches!(
            accounts.change_password_once(&ann, PASSWORD, new, Some(attempt)),
            Err(AccountError::BadCredentials)
        ));
    }
    // A browser whose session the first send ended: only this form,
    // saying the password it set, gets a session.
    assert!(matches!(
        accounts.password_change_sent_again(&ann, new, &other),
        Err(AccountError::BadCredentials)
    ));
    assert!(matches!(
        accounts.password_change_sent_again(&ann, PASSWORD, &form),
        Err(AccountError::BadCredentials)
    ));
    let back = accounts
        .password_change_sent_again(&ann, new, &form)
        .unwrap();
    assert!(accounts.session(&back.token).unwrap().is_some());
    assert_eq!(accounts.session(&again.token).unwrap(), None);
    accounts.log_in(&ann, new).unwrap();
}

/// A double click: the same form sent twice at once. One changes the
/// password; the other finds it changed by the same form, and both are
/// answered with a session, as the first send is.
#[test]
fn a_password_form_sent_twice_at_once_is_done_once_and_both_are_answered() {
    let (_, accounts) = accounts();
    let ann = slug("ann");
    accounts.sign_up(&ann, "Ann", PASSWORD).unwrap();
    let form = Attempt::of(&[b"one page"]);
    let barrier = Barrier::new(2);
    let answers: Vec<_> = std::thread::scope(|scope| {
        let sends: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    accounts.change_password_once(&ann, PASSWORD, "a new password", Some(&form))
                })
            })
            .collect();
        sends.into_iter().map(|send| send.join().unwrap()).collect()
    });
    for answer in &answers {
        assert!(answer.is_ok(), "{answers:?}");
    }
    accounts.log_in(&ann, "a new password").unwrap();
}

/// A password stored before the form's attempt was kept beside it (a
/// PHC string and nothing else) logs in and changes as it always did.
#[test]
fn a_password_stored_as_a_plain_phc_string_still_logs_in_and_changes() {
    use argon2::password_hash::{rand_core::OsRng, PasswordHasher, SaltString};
    let (recipes, accounts) = accounts();
    let ann = slug("ann");
    accounts.sign_up(&ann, "Ann", "a first password").unwrap();
    let salt = SaltString::generate(&mut OsRng);
    let phc = argon2::Argon2::default()
        .hash_password(PASSWORD.as_bytes(), &salt)
        .unwrap()
        .to_string();
    let secrets = recipes.store().keyspace("secrets").unwrap();
    secrets.insert(b"password/ann", phc.as_bytes()).unwrap();
    accounts.log_in(&ann, PASSWORD).unwrap();
    let form = Attempt::of(&[b"a page"]);
    accounts
        .change_password_once(&ann, PASSWORD, "a new password", Some(&form))
        .unwrap();
    accounts.log_in(&ann, "a new password").unwrap();
}

#[test]
fn logging_out_everywhere_and_disabling_end_sessions() {
    let (_, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    let (_, one) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    let (_, two) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    accounts.log_out_everywhere(&slug("ann")).unwrap();
    assert_eq!(accounts.session(&one.token).unwrap(), None);
    assert_eq!(accounts.session(&two.token).unwrap(), None);
    let (_, three) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    accounts.set_disabled(&slug("ann"), true).unwrap();
    assert_eq!(accounts.session(&three.token).unwrap(), None);
    assert!(matches!(
        accounts.log_in(&slug("ann"), PASSWORD),
        Err(AccountError::Disabled(_))
    ));
    // The same answer for a wrong password: it never confirms a guess.
    assert!(matches!(
        accounts.log_in(&slug("ann"), "a wrong guess!"),
        Err(AccountError::Disabled(_))
    ));
    accounts.set_disabled(&slug("ann"), false).unwrap();
    accounts.log_in(&slug("ann"), PASSWORD).unwrap();
}

#[test]
fn secrets_are_not_history_and_never_exported() {
    let (recipes, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    let (_, session) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    let mut file = Vec::new();
    export(&recipes.store().db(), &mut file).unwrap();
    let file = String::from_utf8(file).unwrap();
    assert!(file.contains("\"ann\""), "the cook is in the store");
    assert!(!file.contains("argon2"), "no password hash in the export");
    let raw = stored(recipes.store());
    let token_anywhere = raw.iter().any(|(_, key, value)| {
        [key, value]
            .iter()
            .any(|bytes| String::from_utf8_lossy(bytes).contains(&session.token))
    });
    assert!(!token_anywhere, "only a hash of a session token is stored");
}

#[test]
fn a_login_that_checked_the_old_password_gets_no_session_past_the_change() {
    // A login checks the password it reads (an Argon2 run) and then makes
    // its session; a password change checks the old password, hashes the
    // new one, swaps it in and ends every session. A login that read the
    // old hash just before the swap used to make its session after the
    // end, under the new generation: a session the old password opened,
    // alive after the change. Each round starts the login a little later
    // into the change, across the whole of it, so some rounds land in that
    // window; every session the old password opened must be dead after.
    let (_, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    let started = std::time::Instant::now();
    accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    let one_check = started.elapsed();
    let rounds = 12u32;
    let mut password = PASSWORD.to_owned();
    for round in 0..rounds {
        let new = format!("password number {round}");
        let delay = one_check * 3 * round / rounds;
        let old = password.clone();
        let session = std::thread::scope(|scope| {
            let login = scope.spawn(|| {
                std::thread::sleep(delay);
                accounts.log_in(&slug("ann"), &old)
            });
            accounts.change_password(&slug("ann"), &old, &new).unwrap();
            login.join().unwrap()
        });
        if let Ok((_, session)) = session {
            assert_eq!(
                accounts.session(&session.token).unwrap(),
                None,
                "round {round}: a session opened with the old password outlived the change"
            );
        }
        password = new;
    }
}

#[test]
fn dead_sessions_are_swept_and_live_ones_kept() {
    let (_, accounts) = accounts();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    accounts.sign_up(&slug("ben"), "Ben", PASSWORD).unwrap();
    let (_, ended) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    accounts.log_out_everywhere(&slug("ann")).unwrap();
    let (_, live) = accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    let (_, disabled) = accounts.log_in(&slug("ben"), PASSWORD).unwrap();
    accounts.set_disabled(&slug("ben"), true).unwrap();
    // Ended everywhere and disabled: two records nobody presents again.
    assert_eq!(accounts.sweep_sessions().unwrap(), 2);
    assert_eq!(accounts.sweep_sessions().unwrap(), 0);
    assert!(accounts.session(&live.token).unwrap().is_some());
    for gone in [ended, disabled] {
        assert_eq!(accounts.session(&gone.token).unwrap(), None);
    }
}

/// The server sweeps when it starts, not only an hour later: a node
/// restarted more often than that would never sweep.
#[test]
fn a_server_sweeps_dead_sessions_when_it_starts() {
    let recipes = Recipes::temporary().unwrap();
    let site = std::sync::Arc::new(forkful::web::Site::new(
        recipes.clone(),
        "http://forkful.test",
    ));
    let accounts = site.accounts().unwrap();
    accounts.sign_up(&slug("ann"), "Ann", PASSWORD).unwrap();
    accounts.log_in(&slug("ann"), PASSWORD).unwrap();
    accounts.log_out_everywhere(&slug("ann")).unwrap();
    let sessions = recipes.store().keyspace("sessions").unwrap();
    let count = || sessions.scan_prefix(b"").count();
    assert_eq!(count(), 1, "one dead session kept");
    forkful::web::sweep(std::sync::Arc::downgrade(&site)).unwrap();
    let started = std::time::Instant::now();
    while count() > 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the dead session was not swept at start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_sign_up_cut_short_by_a_crash_leaves_a_handle_that_can_be_repaired() {
    let (recipes, accounts) = accounts();
    // The state the old order left after a crash: a password, no cook.
    let secrets = recipes.store().keyspace("secrets").unwrap();
    secrets
        .insert(b"password/zed", b"$argon2id$orphan")
        .unwrap();
    accounts.sign_up(&slug("zed"), "Zed", PASSWORD).unwrap();
    accounts.log_in(&slug("zed"), PASSWORD).unwrap();
    // The state this order leaves: a cook, no password. The handle is
    // taken, and an administrator gives it a password.
    let mut tx = forkful::store::Transaction::new();
    tx.map(
        forkful::store::EntityMap::new(forkful::store::EntityRef::temp("amy"))
            .with(":user/handle", "amy")
            .with(":user/name", "Amy"),
    );
    recipes.store().transact(&tx).unwrap();
    assert!(matches!(
        accounts.sign_up(&slug("amy"), "Amy", PASSWORD),
        Err(AccountError::HandleTaken(_))
    ));
    assert!(matches!(
        accounts.log_in(&slug("amy"), PASSWORD),
        Err(AccountError::BadCredentials)
    ));
    accounts.set_password(&slug("amy"), PASSWORD).unwrap();
    accounts.log_in(&slug("amy"), PASSWORD).unwrap();
}
