//! The faults a live feed's HTTP has (a truncated body, a 500, a 429, a refused connection,
//! a timeout, a body over the cap, redirect loops): each leaves the previous snapshot in use
//! and names the source and the fault.

use super::*;

#[test]
fn a_truncated_file_and_a_500_keep_the_last_snapshot() {
    let (_files, home, s, stamp) = first_snapshot();
    std::thread::sleep(Duration::from_millis(1100)); // a new stamp would differ
    s.fail_always("vast/vms.csv", Fault::Truncate);
    s.fail_always("nebius/vms.csv", Fault::Status(500));
    let o = update(home.path(), &s, &[]);
    assert_kept(
        home.path(),
        &o,
        &stamp,
        &["FAILED", "HTTP 500", "after 3 attempts"],
    );
    assert_eq!(
        s.requests("nebius/vms.csv"),
        1 + 3,
        "one good fetch, then three tries"
    );
}

#[test]
fn a_500_then_success_is_retried_and_a_429_waits_its_retry_after() {
    let (_files, home, s, stamp) = first_snapshot();
    std::thread::sleep(Duration::from_millis(1100));
    s.fail("cudo/vms.csv", vec![Fault::Status(500)]);
    s.fail("verda/vms.csv", vec![Fault::RetryAfter(2)]);
    let t0 = Instant::now();
    let o = update(home.path(), &s, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        t0.elapsed() >= Duration::from_secs(2),
        "Retry-After not honoured"
    );
    assert_ne!(current(home.path()), stamp, "the new snapshot is current");
    assert_eq!(s.requests("verda/vms.csv"), 2 + 1);
}

#[test]
fn connection_refused_and_timeouts_name_the_fault() {
    let (_files, home, s, stamp) = first_snapshot();
    // A port nothing listens on (bound, then closed).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = run(
        home.path(),
        &[
            "catalog",
            "update",
            "--mirror",
            &format!("http://127.0.0.1:{port}"),
        ],
    );
    assert_kept(home.path(), &o, &stamp, &["connection refused"]);
    s.fail_always("lium/vms.csv", Fault::Hang(Duration::from_secs(4)));
    let o = update(home.path(), &s, &["--timeout", "1"]);
    assert_kept(home.path(), &o, &stamp, &["timed out"]);
}

#[test]
fn a_body_over_the_cap_and_redirect_loops_are_refused() {
    let (_files, home, s, stamp) = first_snapshot();
    s.fail_always("seeweb/vms.csv", Fault::Body(vec![b'x'; 2_100_000]));
    let o = update(home.path(), &s, &["--max-download", "2"]);
    assert_kept(home.path(), &o, &stamp, &["over the 2 MB cap"]);
    s.clear();
    let loop_to = format!("{}/{SKY}/seeweb/vms.csv", s.base);
    s.fail_always("seeweb/vms.csv", Fault::Redirect(loop_to));
    let o = update(home.path(), &s, &[]);
    assert_kept(home.path(), &o, &stamp, &["redirects (a loop?)"]);
    s.clear();
    s.fail_always(
        "seeweb/vms.csv",
        Fault::Redirect("http://example.invalid/x".into()),
    );
    let o = update(home.path(), &s, &[]);
    assert_kept(home.path(), &o, &stamp, &["another host", "refused"]);
}
