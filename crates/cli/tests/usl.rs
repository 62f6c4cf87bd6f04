//! `hotbench usl` on files (no database): the published Cisco fit reproduced from a CSV
//! through the binary, `--json` fields, `--html`, and bad input as exit 1 with `file:line`.

mod common;

use common::*;

/// Baron Schwartz, "Practical Scalability Analysis with the Universal Scalability Law"
/// (VividCortex, 2015), Cisco benchmark: published σ = 0.02671591, κ = 7.690945e-4,
/// λ = 995.6486.
const CISCO_CSV: &str = "clients,tps\n1,955.16\n2,1878.91\n3,2688.01\n4,3548.68\n5,4315.54\n\
6,5130.43\n7,5931.37\n8,6531.08\n9,7219.8\n10,7867.61\n11,8278.71\n12,8646.7\n13,9047.84\n\
14,9426.55\n15,9645.37\n16,9897.24\n17,10097.6\n18,10240.5\n19,10532.39\n20,10798.52\n\
21,11151.43\n22,11518.63\n23,11806\n24,12089.37\n25,12075.41\n26,12177.29\n27,12211.41\n\
28,12158.93\n29,12155.27\n30,12118.04\n31,12140.4\n32,12074.39\n";

#[test]
fn usl_reproduces_the_published_cisco_fit_from_csv() {
    let dir = temp_dir("usl-cisco");
    let csv = write_script(&dir, "cisco.csv", CISCO_CSV);
    let (json, page) = (dir.join("fit.json"), dir.join("fit.html"));
    let o = hotbench()
        .arg("usl")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .arg("--html")
        .arg(&page)
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("contention dominates"), "{out}");
    let v: hotbench_results::UslDoc = common::read(&json);
    assert_eq!(v.format, hotbench_results::USL_FORMAT);
    let fit = &v.first;
    for (k, got, want) in [
        ("sigma", fit.sigma, 0.02671591),
        ("kappa", fit.kappa, 7.690945e-4),
        ("lambda", fit.lambda, 995.6486),
    ] {
        assert!(((got - want) / want).abs() < 1e-3, "{k}: {got} vs {want}");
    }
    assert!(fit.n_max.is_some() && fit.x_max.is_some(), "{fit:?}");
    assert!(fit.r2 > 0.9, "{fit:?}");
    assert_eq!(fit.constraint, hotbench_results::Constraint::Contention);
    assert_eq!(v.fits.len(), 1);
    let html = std::fs::read_to_string(&page).expect("html written");
    assert!(html.contains("USL fit"));
}

#[test]
fn usl_bad_csv_is_exit_1_with_file_and_line() {
    let dir = temp_dir("usl-bad");
    let csv = write_script(&dir, "bad.csv", "clients,tps\n1,100\n2,lots\n");
    let o = hotbench().arg("usl").arg(&csv).output().expect("run");
    assert_eq!(o.status.code(), Some(1));
    let (_, err) = text(&o);
    assert!(
        err.contains("bad.csv:3: not a number in \"2,lots\""),
        "{err}"
    );
    let two = write_script(&dir, "two.csv", "1,100\n2,190\n");
    let o = hotbench().arg("usl").arg(&two).output().expect("run");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("at least 3 distinct client counts"));
}

/// Issue 29: a byte-order mark before the first line (as editors on Windows write) does not
/// cost the first point.
#[test]
fn a_byte_order_mark_does_not_cost_the_first_point() {
    let dir = temp_dir("usl-bom");
    let csv = write_script(&dir, "bom.csv", "\u{feff}1,100\n2,190\n4,350\n8,560\n");
    let json_path = dir.join("fit.json");
    let o = hotbench()
        .arg("usl")
        .arg(&csv)
        .arg("--json")
        .arg(&json_path)
        .output()
        .expect("run hotbench");
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    let v = common::json(&json_path);
    let points = v["points"].as_array().expect("points");
    assert_eq!(points.len(), 4, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
