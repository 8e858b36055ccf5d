//! Instants: points in time as `i64` milliseconds since the Unix epoch, UTC.
//!
//! The store stamps every transaction with an instant and the export format
//! writes them as `#inst "..."` strings, so this module converts between the
//! integer form and RFC 3339 text ([`format_rfc3339`], [`parse_rfc3339`]) and
//! reads the clock ([`now_millis`]). Calendar arithmetic uses Howard
//! Hinnant's days-from-civil / civil-from-days algorithms on the proleptic
//! Gregorian calendar, written out here so the crate needs no date library.

use std::time::{SystemTime, UNIX_EPOCH};

const MILLIS_PER_SECOND: i64 = 1_000;
const MILLIS_PER_MINUTE: i64 = 60 * MILLIS_PER_SECOND;
const MILLIS_PER_HOUR: i64 = 60 * MILLIS_PER_MINUTE;
const MILLIS_PER_DAY: i64 = 24 * MILLIS_PER_HOUR;

/// The first instant the store takes: 0000-01-01T00:00:00.000Z.
pub const MIN_MILLIS: i64 = -62_167_219_200_000;
/// The last instant the store takes: 9999-12-31T23:59:59.999Z. Years
/// outside 0000..=9999 have no RFC 3339 form, so an export could not be
/// read back: every way in (parse, transact, import) refuses them.
pub const MAX_MILLIS: i64 = 253_402_300_799_999;

/// Whether an instant lies in the years 0000 to 9999.
#[must_use]
pub fn in_range(millis: i64) -> bool {
    (MIN_MILLIS..=MAX_MILLIS).contains(&millis)
}

/// Formats an instant as RFC 3339 in UTC with exactly three fractional
/// digits, e.g. `2026-11-30T03:29:03.123Z`.
///
/// The fixed width makes formatted instants of years 0..=9999 sort as text
/// in the same order as the numbers. Every `i64` is accepted: years outside
/// 0..=9999, which RFC 3339 cannot express, are written in ISO 8601's
/// expanded form (`-0001-...`, `+10000-...`) rather than panicking, and
/// [`parse_rfc3339`] does not read those back.
#[must_use]
pub fn format_rfc3339(millis: i64) -> String {
    let mut out = String::with_capacity(24);
    write_rfc3339(&mut out, millis);
    out
}

/// Appends `millis` as `format_rfc3339` writes it, without allocating: pages
/// write an instant or two per line of a list.
pub fn write_rfc3339(out: &mut String, millis: i64) {
    // Euclidean division so that instants before 1970 fall on the earlier
    // day with a positive time of day, not on a "negative" time.
    let days = millis.div_euclid(MILLIS_PER_DAY);
    let of_day = millis.rem_euclid(MILLIS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let push = |out: &mut String, n: i64, width: u32| {
        for k in (0..width).rev() {
            let digit = (n / 10i64.pow(k)) % 10;
            out.push(char::from(b'0' + digit as u8));
        }
    };
    if (0..=9999).contains(&year) {
        push(out, year, 4);
    } else if year < 0 {
        out.push('-');
        push(out, -year, 4.max(digit_count(-year)));
    } else {
        out.push('+');
        push(out, year, digit_count(year));
    }
    out.push('-');
    push(out, month, 2);
    out.push('-');
    push(out, day, 2);
    out.push('T');
    push(out, of_day / MILLIS_PER_HOUR, 2);
    out.push(':');
    push(out, of_day % MILLIS_PER_HOUR / MILLIS_PER_MINUTE, 2);
    out.push(':');
    push(out, of_day % MILLIS_PER_MINUTE / MILLIS_PER_SECOND, 2);
    out.push('.');
    push(out, of_day % MILLIS_PER_SECOND, 3);
    out.push('Z');
}

fn digit_count(n: i64) -> u32 {
    n.checked_ilog10().map_or(1, |d| d + 1)
}

/// Parses RFC 3339 text into an instant, or `None` if it is not a valid
/// date-time.
///
/// Accepts `YYYY-MM-DDTHH:MM:SS[.fraction]` followed by `Z` or `±HH:MM`
/// (`T` and `Z` may be lower case, as RFC 3339 allows), and a bare date
/// `YYYY-MM-DD`, meaning midnight UTC. The fraction has 1 to 9 digits and is
/// truncated to milliseconds. Every field is range-checked, including the
/// day against the month's length in leap and common years; leap seconds
/// (`:60`) are rejected because an `i64` of milliseconds cannot hold them.
#[must_use]
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let year = digits(b, 0, 4)?;
    literal(b, 4, b'-')?;
    let month = digits(b, 5, 2)?;
    literal(b, 7, b'-')?;
    let day = digits(b, 8, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let midnight = days_from_civil(year, month, day) * MILLIS_PER_DAY;
    if b.len() == 10 {
        return Some(midnight);
    }

    if !matches!(b.get(10), Some(b'T' | b't')) {
        return None;
    }
    let hour = digits(b, 11, 2)?;
    literal(b, 13, b':')?;
    let minute = digits(b, 14, 2)?;
    literal(b, 16, b':')?;
    let second = digits(b, 17, 2)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }

    let mut i = 19;
    let mut milli = 0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let count = i - start;
        if !(1..=9).contains(&count) {
            return None;
        }
        // Pad or cut to exactly three digits: truncation, not rounding, so
        // that parsing never moves an instant into the next second.
        milli = (start..start + 3).fold(0, |acc, j| {
            acc * 10 + if j < i { i64::from(b[j] - b'0') } else { 0 }
        });
    }

    let offset_minutes = match b.get(i) {
        Some(b'Z' | b'z') if b.len() == i + 1 => 0,
        Some(&sign @ (b'+' | b'-')) if b.len() == i + 6 => {
            let hours = digits(b, i + 1, 2)?;
            literal(b, i + 3, b':')?;
            let minutes = digits(b, i + 4, 2)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let magnitude = hours * 60 + minutes;
            if sign == b'-' {
                -magnitude
            } else {
                magnitude
            }
        }
        _ => return None,
    };

    // The text shows local time, which is UTC plus the offset; subtract the
    // offset to get back to UTC.
    Some(
        midnight
            + hour * MILLIS_PER_HOUR
            + minute * MILLIS_PER_MINUTE
            + second * MILLIS_PER_SECOND
            + milli
            - offset_minutes * MILLIS_PER_MINUTE,
    )
}

/// The current time from the system clock, in milliseconds since the epoch.
///
/// A clock set before 1970 gives a negative value instead of a panic, and
/// one beyond `i64` range (hundreds of millions of years away) saturates.
#[must_use]
pub fn now_millis() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(since) => i64::try_from(since.as_millis()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_millis()).map_or(i64::MIN, |m| -m),
    }
}

/// Reads exactly `count` ASCII digits at `at` as a number.
fn digits(b: &[u8], at: usize, count: usize) -> Option<i64> {
    b.get(at..at + count)?.iter().try_fold(0, |acc, &d| {
        d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
    })
}

fn literal(b: &[u8], at: usize, expected: u8) -> Option<()> {
    (b.get(at) == Some(&expected)).then_some(())
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
///
/// The year is shifted to start in March so that the leap day falls at the
/// end of the year, which makes the day-of-year a simple linear formula;
/// 400-year eras (exactly 146 097 days each) keep everything exact for any
/// year, negative included.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400; // 0..=399
    let month_from_march = (month + 9) % 12; // March = 0 ... February = 11
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1; // 0..=365
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719 468 is the number of days from 0000-03-01 to 1970-01-01.
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`]: (year, month, day) of a day count.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    // Undo the leap-day corrections (every 4th, 100th and 400th year) to
    // find which year of the era (0..=399) the day falls in.
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_ends_are_the_first_and_last_instants_of_four_digit_years() {
        assert_eq!(parse_rfc3339("0000-01-01T00:00:00Z"), Some(MIN_MILLIS));
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59.999Z"), Some(MAX_MILLIS));
        assert!(in_range(MIN_MILLIS) && in_range(MAX_MILLIS));
        assert!(!in_range(MIN_MILLIS - 1) && !in_range(MAX_MILLIS + 1));
    }

    /// First and last millisecond that RFC 3339 (four-digit years) can show.
    const EARLIEST: i64 = MIN_MILLIS;
    const LATEST: i64 = MAX_MILLIS;

    #[test]
    fn the_epoch_is_zero() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01"), Some(0));
    }

    #[test]
    fn known_dates_format_and_parse() {
        let cases = [
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_796_009_343_123, "2026-11-30T03:29:03.123Z"),
            (1_234_567_890_000, "2009-02-13T23:31:30.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (-86_400_000, "1969-12-31T00:00:00.000Z"),
            (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
            (EARLIEST, "0000-01-01T00:00:00.000Z"),
            (LATEST, "9999-12-31T23:59:59.999Z"),
        ];
        for (millis, text) in cases {
            assert_eq!(format_rfc3339(millis), text, "{millis}");
            assert_eq!(parse_rfc3339(text), Some(millis), "{text}");
        }
    }

    #[test]
    fn leap_days_follow_the_gregorian_rules() {
        assert!(parse_rfc3339("2000-02-29").is_some()); // divisible by 400
        assert!(parse_rfc3339("2024-02-29").is_some()); // divisible by 4
        assert!(parse_rfc3339("0000-02-29").is_some()); // year 0 is a leap year
        assert_eq!(parse_rfc3339("1900-02-29"), None); // divisible by 100
        assert_eq!(parse_rfc3339("2023-02-29"), None);
        assert_eq!(parse_rfc3339("2024-04-31"), None);
        assert_eq!(parse_rfc3339("2024-12-32"), None);
    }

    #[test]
    fn offsets_are_subtracted_to_reach_utc() {
        let utc = parse_rfc3339("2026-11-30T03:29:03.123Z").unwrap();
        assert_eq!(parse_rfc3339("2026-11-30T05:29:03.123+02:00"), Some(utc));
        assert_eq!(parse_rfc3339("2026-11-29T21:59:03.123-05:30"), Some(utc));
        assert_eq!(parse_rfc3339("2026-11-30T03:29:03.123+00:00"), Some(utc));
        assert_eq!(parse_rfc3339("2026-11-30T03:29:03.123-00:00"), Some(utc));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00+01:00"), Some(-3_600_000));
    }

    #[test]
    fn fractions_of_one_to_nine_digits_truncate_to_milliseconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1_500));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.05Z"), Some(1_050));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123Z"), Some(1_123));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123999999Z"), Some(1_123));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59.9999Z"), Some(-1));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.Z"), None);
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.1234567891Z"), None);
    }

    #[test]
    fn lower_case_t_and_z_are_accepted() {
        assert_eq!(parse_rfc3339("1970-01-01t00:00:01z"), Some(1_000));
    }

    #[test]
    fn invalid_inputs_are_rejected() {
        for text in [
            "",
            "1970",
            "1970-01",
            "1970-1-01",
            "70-01-01",
            "1970-00-01",
            "1970-13-01",
            "1970-01-00",
            "1970/01/01",
            "1970-01-01T",
            "1970-01-01 00:00:00Z",
            "1970-01-01T00:00:00",
            "1970-01-01T00:00Z",
            "1970-01-01T24:00:00Z",
            "1970-01-01T00:60:00Z",
            "1970-01-01T00:00:60Z",
            "1970-01-01T00:00:00+2:00",
            "1970-01-01T00:00:00+0200",
            "1970-01-01T00:00:00+24:00",
            "1970-01-01T00:00:00+01:60",
            "1970-01-01T00:00:00ZZ",
            "1970-01-01T00:00:00Z ",
            " 1970-01-01",
            "1970-01-01Z",
            "+1970-01-01",
            "-001-01-01",
            "197O-01-01",
            "1970-01-01T00:00:0é",
            "1970-01-01T00:00:00.１Z",
        ] {
            assert_eq!(parse_rfc3339(text), None, "{text:?}");
        }
    }

    #[test]
    fn formatting_then_parsing_gives_back_every_representable_instant() {
        // A fixed-seed linear congruential generator spreads the samples
        // over the whole four-digit-year range, reproducibly.
        let span = (LATEST - EARLIEST + 1) as u64;
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut samples = vec![
            EARLIEST,
            EARLIEST + 1,
            -1,
            0,
            1,
            999,
            1_000,
            LATEST - 1,
            LATEST,
        ];
        for _ in 0..20_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            samples.push(EARLIEST + ((state >> 11) % span) as i64);
        }
        // Midnights and the millisecond before them, where day, month and
        // year roll over.
        for day in (EARLIEST / MILLIS_PER_DAY + 1..=LATEST / MILLIS_PER_DAY).step_by(97) {
            samples.push(day * MILLIS_PER_DAY);
            samples.push(day * MILLIS_PER_DAY - 1);
        }
        for millis in samples {
            let text = format_rfc3339(millis);
            assert_eq!(text.len(), 24, "{text}");
            assert_eq!(parse_rfc3339(&text), Some(millis), "{text}");
        }
    }

    #[test]
    fn day_counts_and_civil_dates_invert_each_other() {
        for days in (-1_000_000..1_000_000).step_by(7) {
            let (year, month, day) = civil_from_days(days);
            assert!((1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day));
            assert_eq!(days_from_civil(year, month, day), days);
        }
    }

    #[test]
    fn years_beyond_four_digits_format_without_panicking() {
        assert_eq!(format_rfc3339(EARLIEST - 1), "-0001-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339(LATEST + 1), "+10000-01-01T00:00:00.000Z");
        assert!(format_rfc3339(i64::MIN).starts_with('-'));
        assert!(format_rfc3339(i64::MAX).starts_with('+'));
        assert_eq!(parse_rfc3339(&format_rfc3339(LATEST + 1)), None);
    }

    #[test]
    fn now_is_after_this_module_was_written() {
        let now = now_millis();
        assert!(now > parse_rfc3339("2024-01-01").unwrap(), "{now}");
        assert!(now < LATEST);
    }
}
