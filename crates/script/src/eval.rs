//! Expression evaluation with pgbench's semantics: NULL propagation, int64
//! overflow errors, int/double coercions, lazy `AND`/`OR`/`CASE`, argument
//! checks of the random functions, and `debug()` output.

use crate::expr::{Expr, Func};
use crate::hash::{hash_fnv1a, hash_murmur2, permute};
use crate::prng::{
    exponential_rand, gaussian_rand, getrand, zipfian_rand, PrngState, MAX_ZIPFIAN_PARAM,
    MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM,
};
use crate::value::{format_f6, Value};
use crate::vars::Variables;
use std::io::Write;

/// A run-time evaluation error, with pgbench's message text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EvalError(pub String);

/// Everything an evaluation reads or advances.
pub struct EvalContext<'a> {
    /// The client's variables.
    pub vars: &'a Variables,
    /// The client's `cs_func_rs` generator.
    pub rng: &'a mut PrngState,
    /// Script index, for `debug()` output.
    pub script: usize,
    /// Zero-based command index, for `debug()` output (printed plus one).
    pub command: usize,
    /// Where `debug()` writes its lines.
    pub debug: &'a mut dyn Write,
}

const MAX_FARGS: usize = 16;

fn err<T>(msg: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError(msg.into()))
}

fn to_bool(v: &Value) -> Result<bool, EvalError> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => err(format!("cannot coerce {} to boolean", other.type_name())),
    }
}

fn to_int(v: &Value) -> Result<i64, EvalError> {
    match *v {
        Value::Int(i) => Ok(i),
        Value::Double(d) => {
            let r = d.round_ties_even();
            if r.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                err(format!("double to int overflow for {}", format_f6(r)))
            } else {
                Ok(r as i64)
            }
        }
        ref other => err(format!("cannot coerce {} to int", other.type_name())),
    }
}

fn to_double(v: &Value) -> Result<f64, EvalError> {
    match *v {
        Value::Double(d) => Ok(d),
        Value::Int(i) => Ok(i as f64),
        ref other => err(format!("cannot coerce {} to double", other.type_name())),
    }
}

/// Evaluates `expr`.
pub fn evaluate(expr: &Expr, ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    match expr {
        Expr::Const(v) => Ok(*v),
        Expr::Var(name) => ctx.vars.value(name).map_err(EvalError),
        Expr::Call(func, args) => match func {
            Func::And | Func::Or | Func::Case => eval_lazy(*func, args, ctx),
            _ => eval_standard(*func, args, ctx),
        },
    }
}

fn eval_lazy(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    let (Some(first), Some(second)) = (args.first(), args.get(1)) else {
        return err("internal error: missing arguments");
    };
    let a1 = evaluate(first, ctx)?;
    match func {
        Func::And | Func::Or => {
            if a1 == Value::Null {
                return Ok(Value::Null);
            }
            let b1 = to_bool(&a1)?;
            if (func == Func::And && !b1) || (func == Func::Or && b1) {
                return Ok(Value::Bool(b1));
            }
            let a2 = evaluate(second, ctx)?;
            if a2 == Value::Null {
                return Ok(Value::Null);
            }
            Ok(Value::Bool(to_bool(&a2)?))
        }
        _ => {
            // CASE: when1, then1, when2, then2, ..., else
            if a1.truth() {
                return evaluate(second, ctx);
            }
            let rest = args.get(2..).unwrap_or(&[]);
            if rest.len() == 1 {
                return evaluate(&rest[0], ctx);
            }
            if rest.is_empty() {
                return Ok(Value::Null);
            }
            eval_lazy(Func::Case, rest, ctx)
        }
    }
}

fn eval_standard(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    let mut vals = [Value::Null; MAX_FARGS];
    let mut has_null = false;
    for (i, a) in args.iter().enumerate() {
        if i >= MAX_FARGS {
            return err(format!(
                "too many function arguments, maximum is {MAX_FARGS}"
            ));
        }
        vals[i] = evaluate(a, ctx)?;
        has_null |= vals[i] == Value::Null;
    }
    let n = args.len().min(MAX_FARGS);
    let vals = &vals[..n];
    if has_null && func != Func::Is && func != Func::Debug {
        return Ok(Value::Null);
    }
    let arg = |i: usize| vals.get(i).copied().unwrap_or(Value::Null);
    match func {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Le
        | Func::Lt => arithmetic(func, arg(0), arg(1)),
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::LShift | Func::RShift => {
            let (li, ri) = (to_int(&arg(0))?, to_int(&arg(1))?);
            Ok(Value::Int(match func {
                Func::BitAnd => li & ri,
                Func::BitOr => li | ri,
                Func::BitXor => li ^ ri,
                // x86-64 semantics of C's shifts: the count is taken modulo 64.
                Func::LShift => li.wrapping_shl(ri as u32),
                _ => li.wrapping_shr(ri as u32),
            }))
        }
        Func::Not => Ok(Value::Bool(!to_bool(&arg(0))?)),
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Abs => match arg(0) {
            Value::Int(i) => Ok(Value::Int(i.wrapping_abs())),
            Value::Double(d) => Ok(Value::Double(if d < 0.0 { -d } else { d })),
            // pgbench reads a boolean's bytes as a double here (true is the
            // smallest denormal); reproduced for bit-exactness.
            Value::Bool(b) => Ok(Value::Double(f64::from_bits(u64::from(b)))),
            Value::Null => Ok(Value::Null),
        },
        Func::Debug => {
            let v = arg(0);
            let _ = writeln!(
                ctx.debug,
                "debug(script={},command={}): {}",
                ctx.script,
                ctx.command + 1,
                v.debug_text()
            );
            Ok(v)
        }
        Func::Double | Func::Sqrt | Func::Ln | Func::Exp => {
            let d = to_double(&arg(0))?;
            Ok(Value::Double(match func {
                Func::Sqrt => d.sqrt(),
                Func::Ln => d.ln(),
                Func::Exp => d.exp(),
                _ => d,
            }))
        }
        Func::Int => Ok(Value::Int(to_int(&arg(0))?)),
        Func::Least | Func::Greatest => least_greatest(func == Func::Least, vals),
        Func::Random | Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            random(func, vals, ctx)
        }
        Func::Pow => Ok(Value::Double(to_double(&arg(0))?.powf(to_double(&arg(1))?))),
        Func::Is => {
            // pgbench compares the type and the boolean view of the value.
            let (a, b) = (arg(0), arg(1));
            let same = match (a, b) {
                (Value::Null, Value::Null) => true,
                (Value::Bool(x), Value::Bool(y)) => x == y,
                _ => false,
            };
            Ok(Value::Bool(same))
        }
        Func::HashMurmur2 | Func::HashFnv1a => {
            let val = to_int(&arg(0))?;
            let seed = to_int(&arg(1))? as u64;
            Ok(Value::Int(if func == Func::HashMurmur2 {
                hash_murmur2(val, seed)
            } else {
                hash_fnv1a(val, seed)
            }))
        }
        Func::Permute => {
            let val = to_int(&arg(0))?;
            let size = to_int(&arg(1))?;
            let seed = to_int(&arg(2))?;
            if size <= 0 {
                return err("permute size parameter must be greater than zero");
            }
            Ok(Value::Int(permute(val, size, seed)))
        }
        Func::And | Func::Or | Func::Case => eval_lazy(func, args, ctx),
    }
}

/// `+ - * / %` and the comparisons: in doubles when either side is one (but `%`), else in
/// bigints with pgbench's range errors.
fn arithmetic(func: Func, l: Value, r: Value) -> Result<Value, EvalError> {
    let any_double = matches!(l, Value::Double(_)) || matches!(r, Value::Double(_));
    if any_double && func != Func::Mod {
        let (ld, rd) = (to_double(&l)?, to_double(&r)?);
        return Ok(match func {
            Func::Add => Value::Double(ld + rd),
            Func::Sub => Value::Double(ld - rd),
            Func::Mul => Value::Double(ld * rd),
            Func::Div => Value::Double(ld / rd),
            Func::Eq => Value::Bool(ld == rd),
            Func::Ne => Value::Bool(ld != rd),
            Func::Le => Value::Bool(ld <= rd),
            _ => Value::Bool(ld < rd),
        });
    }
    let (li, ri) = (to_int(&l)?, to_int(&r)?);
    match func {
        Func::Add => li
            .checked_add(ri)
            .map(Value::Int)
            .ok_or_else(|| EvalError("bigint add out of range".into())),
        Func::Sub => li
            .checked_sub(ri)
            .map(Value::Int)
            .ok_or_else(|| EvalError("bigint sub out of range".into())),
        Func::Mul => li
            .checked_mul(ri)
            .map(Value::Int)
            .ok_or_else(|| EvalError("bigint mul out of range".into())),
        Func::Eq => Ok(Value::Bool(li == ri)),
        Func::Ne => Ok(Value::Bool(li != ri)),
        Func::Le => Ok(Value::Bool(li <= ri)),
        Func::Lt => Ok(Value::Bool(li < ri)),
        _ => {
            if ri == 0 {
                return err("division by zero");
            }
            if ri == -1 {
                if func == Func::Div {
                    if li == i64::MIN {
                        return err("bigint div out of range");
                    }
                    return Ok(Value::Int(-li));
                }
                return Ok(Value::Int(0));
            }
            Ok(Value::Int(if func == Func::Div {
                li / ri
            } else {
                li % ri
            }))
        }
    }
}

/// `least(…)`/`greatest(…)`: in doubles when any argument is one, with C's Min/Max.
fn least_greatest(least: bool, vals: &[Value]) -> Result<Value, EvalError> {
    let arg = |i: usize| vals.get(i).copied().unwrap_or(Value::Null);
    if vals.iter().any(|v| matches!(v, Value::Double(_))) {
        let mut ext = to_double(&arg(0))?;
        for v in vals.get(1..).unwrap_or(&[]) {
            let d = to_double(v)?;
            // C's Min/Max macros: (a < b ? a : b) / (a > b ? a : b)
            ext = if least {
                if ext < d {
                    ext
                } else {
                    d
                }
            } else if ext > d {
                ext
            } else {
                d
            };
        }
        Ok(Value::Double(ext))
    } else {
        let mut ext = to_int(&arg(0))?;
        for v in vals.get(1..).unwrap_or(&[]) {
            let i = to_int(v)?;
            ext = if least { ext.min(i) } else { ext.max(i) };
        }
        Ok(Value::Int(ext))
    }
}

/// `random(lo, hi)` and its exponential, gaussian and zipfian forms, with pgbench's checks
/// of the range and the parameter.
fn random(func: Func, vals: &[Value], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    let arg = |i: usize| vals.get(i).copied().unwrap_or(Value::Null);
    let imin = to_int(&arg(0))?;
    let imax = to_int(&arg(1))?;
    if imin > imax {
        return err("empty range given to random");
    }
    if imax
        .checked_sub(imin)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return err("random range is too large");
    }
    if func == Func::Random {
        return Ok(Value::Int(getrand(ctx.rng, imin, imax)));
    }
    let param = to_double(&arg(2))?;
    match func {
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return err(format!(
                    "gaussian parameter must be at least {} (not {})",
                    format_f6(MIN_GAUSSIAN_PARAM),
                    format_f6(param)
                ));
            }
            Ok(Value::Int(gaussian_rand(ctx.rng, imin, imax, param)))
        }
        Func::RandomZipfian => {
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return err(format!(
                    "zipfian parameter must be in range [{:.3}, {:.0}] (not {})",
                    MIN_ZIPFIAN_PARAM,
                    MAX_ZIPFIAN_PARAM,
                    format_f6(param)
                ));
            }
            Ok(Value::Int(zipfian_rand(ctx.rng, imin, imax, param)))
        }
        _ => {
            if param <= 0.0 || param.is_nan() {
                if param.is_nan() {
                    // NaN passes pgbench's `param <= 0.0` check.
                    return Ok(Value::Int(exponential_rand(ctx.rng, imin, imax, param)));
                }
                return err(format!(
                    "exponential parameter must be greater than zero (not {})",
                    format_f6(param)
                ));
            }
            Ok(Value::Int(exponential_rand(ctx.rng, imin, imax, param)))
        }
    }
}
