//! Several hosts in one target, against two real servers from the harness: a client can start
//! from any host and falls back to the others, `load_balance_hosts=random` spreads
//! connections, and a host that goes away is skipped.

use hotbench_pgserver::testing::{private, shared, test_cluster_options};
use hotbench_wire::{Config, Connector, Environment};

fn clean_env() -> Environment {
    Environment {
        os_user: Some("postgres".into()),
        probe_socket_dirs: false,
        ..Environment::default()
    }
}

fn port_of(conn: &mut hotbench_wire::Connection) -> u16 {
    let r = conn.simple_query("show port").expect("show port");
    r.last().unwrap().rows[0][0]
        .as_ref()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn clients_start_from_their_host_and_fall_back_to_the_others() {
    let a = shared();
    let b = private(test_cluster_options());
    let target = |extra: &str| {
        format!(
            "host={},{} port={},{} user={} dbname=postgres {extra}",
            a.host().display(),
            b.host().display(),
            a.port(),
            b.port(),
            a.user()
        )
    };
    let params = Config::parse(&target(""))
        .unwrap()
        .resolve_in(&clean_env())
        .unwrap();
    let connector = Connector::new(params);
    assert_eq!(connector.host_count(), 2);
    for (first, port) in [(0, a.port()), (1, b.port()), (2, a.port()), (3, b.port())] {
        let (mut conn, index) = connector.connect_from(first).unwrap();
        assert_eq!(index, first % 2);
        assert_eq!(port_of(&mut conn), port);
    }

    // Random load balancing reaches both hosts.
    let params = Config::parse(&target("load_balance_hosts=random"))
        .unwrap()
        .resolve_in(&clean_env())
        .unwrap();
    let random = Connector::new(params);
    let mut ports = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let mut c = random.connect().unwrap();
        ports.insert(port_of(&mut c));
        if ports.len() == 2 {
            break;
        }
    }
    assert_eq!(ports.len(), 2, "40 random connections all went to one host");

    // A host that goes away: clients that preferred it land on the other.
    b.stop();
    let (mut conn, index) = connector.connect_from(1).unwrap();
    assert_eq!(index, 0);
    assert_eq!(port_of(&mut conn), a.port());

    assert!(Config::parse(&target("load_balance_hosts=sometimes"))
        .unwrap_err()
        .to_string()
        .contains("invalid load_balance_hosts value"));
}
