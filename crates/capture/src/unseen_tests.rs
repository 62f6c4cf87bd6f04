use super::*;
use crate::model::{RelKind, ValueKind};
use crate::profile::{ColumnProfile, ColumnStats};

/// The captured schema of procrastinate 3.10 as `hotbench capture` writes it (types from
/// the catalogs, functions from `pg_get_functiondef`), cut to what the calls need.
const SCHEMA: &str = "create type procrastinate_job_status as enum (E'todo', E'doing', E'succeeded', E'failed', E'cancelled', E'aborting', E'aborted');
create type procrastinate_job_to_defer_v1 as (\"queue_name\" character varying, \"task_name\" character varying, \"priority\" integer, \"lock\" text, \"queueing_lock\" text, \"args\" jsonb, \"scheduled_at\" timestamp with time zone);
CREATE OR REPLACE FUNCTION public.procrastinate_finish_job_v1(job_id bigint, end_status procrastinate_job_status, delete_job boolean)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
    _job_id bigint;
BEGIN
    IF end_status NOT IN ('succeeded', 'failed', 'aborted') THEN
        RAISE 'End status should be either \"succeeded\", \"failed\" or \"aborted\" (job id: %)', job_id;
    END IF;
    IF delete_job THEN
        DELETE FROM procrastinate_jobs WHERE id = job_id AND status IN ('todo', 'doing') RETURNING id INTO _job_id;
    END IF;
END;
$function$;
CREATE OR REPLACE FUNCTION public.procrastinate_fetch_job_v2(target_queue_names character varying[], p_worker_id bigint)
 RETURNS procrastinate_jobs
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN NULL; END; $function$;
CREATE OR REPLACE FUNCTION public.procrastinate_defer_jobs_v1(jobs procrastinate_job_to_defer_v1[])
 RETURNS bigint[]
 LANGUAGE plpgsql
AS $function$ BEGIN RETURN NULL; END; $function$;";

fn col(name: &str, kind: ValueKind, not_null: bool, stats: Option<ColumnStats>) -> ColumnProfile {
    ColumnProfile {
        name: name.into(),
        type_sql: String::new(),
        kind,
        not_null,
        stats,
    }
}

fn mcv(v: &str) -> Option<ColumnStats> {
    Some(ColumnStats {
        mcv: vec![(v.into(), 0.9)],
        ..Default::default()
    })
}

fn jobs() -> Vec<TableProfile> {
    let int = ValueKind::Int {
        min: i64::MIN.into(),
        max: i64::MAX.into(),
    };
    let nulls = Some(ColumnStats {
        null_frac: 1.0,
        ..Default::default()
    });
    vec![TableProfile {
        schema: "public".into(),
        name: "procrastinate_jobs".into(),
        kind: RelKind::Table,
        partition_of: None,
        reltuples: 1000.0,
        rows: 1000,
        columns: vec![
            col("id", int.clone(), true, None),
            col("queue_name", ValueKind::Text, true, mcv("jobs")),
            col("task_name", ValueKind::Text, true, mcv("__main__.work")),
            col("priority", int.clone(), true, mcv("0")),
            col("lock", ValueKind::Text, false, nulls.clone()),
            col("queueing_lock", ValueKind::Text, false, None),
            col(
                "args",
                ValueKind::Json,
                true,
                Some(ColumnStats {
                    histogram: vec!["{\"i\": 0}".into(), "{\"i\": 9}".into()],
                    ..Default::default()
                }),
            ),
            col("scheduled_at", ValueKind::TimestampTz, false, nulls),
            col(
                "status",
                ValueKind::Enum {
                    labels: vec!["todo".into()],
                },
                true,
                mcv("todo"),
            ),
            col(
                "worker_id",
                int,
                false,
                Some(ColumnStats {
                    null_frac: 0.2,
                    mcv: vec![("3".into(), 0.8)],
                    ..Default::default()
                }),
            ),
        ],
    }]
}

fn value(f: Option<Fitted>) -> String {
    match f.map(|f| f.fit) {
        Some(Fit::Constant(Value::Text(t))) => t,
        Some(Fit::Int { lo, hi, .. }) => format!("{lo}..{hi}"),
        other => format!("{other:?}"),
    }
}

#[test]
fn procrastinates_calls_bound_server_side_get_values_of_their_types() {
    let defs = Defs::read(SCHEMA);
    assert_eq!(
        defs.functions["procrastinate_finish_job_v1"].args,
        vec![
            ("job_id".to_string(), "bigint".to_string()),
            ("end_status".into(), "procrastinate_job_status".into()),
            ("delete_job".into(), "boolean".into())
        ]
    );
    let tables = jobs();
    let by_column = |t: &TableProfile, c: &str| {
        let col = t.columns.iter().find(|x| x.name == c)?;
        let s = col.stats.as_ref()?;
        Some(Fitted {
            fit: Fit::Int {
                lo: s.mcv.first()?.0.parse().ok()?,
                hi: s.mcv.first()?.0.parse().ok()?,
                hot: vec![],
                tail: crate::params::Tail::Uniform,
            },
            observations: 0,
            distinct: 0,
            why: "column".into(),
        })
    };
    let fit = |key: &str, slot| fit(&defs, &tables, key, slot, &by_column);
    // The defer's array of one composite row, each attribute procrastinate_jobs' column.
    let defer =
        "select unnest( procrastinate_defer_jobs_v1( ?::procrastinate_job_to_defer_v1[] ) ) as id";
    assert_eq!(
        value(fit(defer, (0, 1))),
        r#"{"(jobs,__main__.work,0,,,\"{\\\"i\\\": 0}\",)"}"#
    );
    // The fetch's queues (an array named after queue_name) and worker (p_worker_id).
    let fetch = "select id, status from procrastinate_fetch_job_v2(?::varchar[], ?)";
    assert_eq!(value(fit(fetch, (0, 2))), "{\"jobs\"}");
    assert_eq!(value(fit(fetch, (1, 2))), "3..3");
    // The finish's status: the label the body accepts, not the column's `todo`; its
    // boolean is named after no column: nothing stands for it.
    let finish = "select procrastinate_finish_job_v1(?, ?, ?)";
    assert_eq!(value(fit(finish, (1, 3))), "succeeded");
    assert!(fit(finish, (2, 3)).is_none());
    // A call whose arguments are not all slots says nothing of its slots.
    assert!(fit("select procrastinate_finish_job_v1(1, ?, ?)", (0, 2)).is_none());
}
