//! Instants: points in time as `i64` milliseconds since the Unix epoch, UTC.
//!
//! The store stamps every transaction with an instant and the export format
//! writes them as `#inst "..."` strings, so this module converts between the
//! integer form and RFC 3339 text ([`format_rfc3339`], [`parse_rfc3339`]) and
//! reads the clock ([`now_millis`]). The calendar and the RFC 3339 grammar
//! are the `time` crate's (already in the build through actix-web); what is
//! ours is the fixed output form, the range, and the few inputs RFC 3339
//! allows that the store does not take (see [`parse_rfc3339`]).

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use time::format_description::well_known::Rfc3339;
use time::macros::format_description;
use time::{Date, Duration, OffsetDateTime, UtcDateTime};

const NANOS_PER_MILLI: i128 = 1_000_000;

/// The first instant the store takes: 0000-01-01T00:00:00.000Z.
pub(crate) const MIN_MILLIS: i64 = -62_167_219_200_000;
/// The last instant the store takes: 9999-12-31T23:59:59.999Z. Years
/// outside 0000..=9999 have no RFC 3339 form, so an export could not be
/// read back: every way in (parse, transact, import) refuses them.
pub(crate) const MAX_MILLIS: i64 = 253_402_300_799_999;

/// Whether an instant lies in the years 0000 to 9999.
#[must_use]
pub(crate) fn in_range(millis: i64) -> bool {
    (MIN_MILLIS..=MAX_MILLIS).contains(&millis)
}

/// The length of every instant [`write_rfc3339`] writes in the years 0000 to
/// 9999.
const FORMATTED_LEN: usize = 24;

/// Formats an instant as RFC 3339 in UTC with exactly three fractional
/// digits, e.g. `2026-11-30T03:29:03.123Z`.
///
/// The fixed width makes formatted instants of years 0..=9999 sort as text
/// in the same order as the numbers. Every `i64` is accepted: one outside
/// those years, which RFC 3339 cannot express and the store refuses, is
/// written as its number (`253402300800000 ms since the epoch`) for the
/// message that refuses it, and [`parse_rfc3339`] does not read that back.
#[must_use]
pub fn format_rfc3339(millis: i64) -> String {
    let mut out = String::with_capacity(FORMATTED_LEN);
    write_rfc3339(&mut out, millis);
    out
}

/// Appends `millis` as `format_rfc3339` writes it, without allocating: pages
/// write an instant or two per line of a list.
pub fn write_rfc3339(out: &mut String, millis: i64) {
    if !in_range(millis) {
        write!(out, "{millis} ms since the epoch").expect("a String takes any text");
        return;
    }
    // The calendar is time's; the digits are put in place here, because
    // time's own `format_into` with the equivalent format description is
    // four times slower. Release builds on the 2-core VM (2026-12-01, other
    // builds running; 5 million instants a run): `format_into` 314 to 396 ns
    // an instant, this 87 to 93 ns, the hand-written calendar it replaced
    // 81 to 113 ns. A catalog page writes two instants a card, 200 for a
    // full page, so `format_into` would have added some 60 µs to the index
    // handler's 75 µs (target: under 80 µs). A test checks that this writes
    // what the format description does.
    let at = UtcDateTime::UNIX_EPOCH + Duration::milliseconds(millis);
    let (year, month, day) = at.to_calendar_date();
    let (hour, minute, second, milli) = at.as_hms_milli();
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let mut put = |start: usize, width: usize, mut n: u32| {
        for digit in text[start..start + width].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year.unsigned_abs());
    put(5, 2, u8::from(month).into());
    put(8, 2, day.into());
    put(11, 2, hour.into());
    put(14, 2, minute.into());
    put(17, 2, second.into());
    put(20, 3, milli.into());
    out.push_str(std::str::from_utf8(&text).expect("ASCII"));
}

/// Parses RFC 3339 text into an instant, or `None` if it is not a valid
/// date-time in the years 0000 to 9999 (in UTC, once its offset is taken
/// off).
///
/// Accepts `YYYY-MM-DDTHH:MM:SS[.fraction]` followed by `Z` or `±HH:MM`
/// (`T` and `Z` may be lower case), and a bare date `YYYY-MM-DD`, meaning
/// midnight UTC. The fraction is truncated to milliseconds. Every field is
/// range-checked, including the day against the month's length. RFC 3339
/// lets applications separate date and time by other than `T` (the `time`
/// crate takes any byte there); the store takes only `T`, so that its
/// instants have one text form. A leap second (`23:59:60` at the end of a
/// month, UTC) reads as the millisecond before it, since an `i64` of
/// milliseconds cannot hold it.
#[must_use]
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let nanos = if text.len() == 10 {
        // Ten bytes leave no room for a sign before the four-digit year.
        let date = Date::parse(text, format_description!("[year]-[month]-[day]")).ok()?;
        date.midnight().as_utc().unix_timestamp_nanos()
    } else {
        if !matches!(text.as_bytes().get(10), Some(b'T' | b't')) {
            return None;
        }
        OffsetDateTime::parse(text, &Rfc3339)
            .ok()?
            .unix_timestamp_nanos()
    };
    // Floor, not round: truncating the fraction never moves an instant into
    // the next millisecond, before 1970 as after.
    let millis = i64::try_from(nanos.div_euclid(NANOS_PER_MILLI)).ok()?;
    in_range(millis).then_some(millis)
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const MILLIS_PER_DAY: i64 = 86_400_000;
    #[test]
    fn the_range_ends_are_the_first_and_last_instants_of_four_digit_years() {
        assert_eq!(parse_rfc3339("0000-01-01T00:00:00Z"), Some(MIN_MILLIS));
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59.999Z"), Some(MAX_MILLIS));
        assert!(in_range(MIN_MILLIS) && in_range(MAX_MILLIS));
        assert!(!in_range(MIN_MILLIS - 1) && !in_range(MAX_MILLIS + 1));
    }

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
            (MIN_MILLIS, "0000-01-01T00:00:00.000Z"),
            (MAX_MILLIS, "9999-12-31T23:59:59.999Z"),
        ];
        for (millis, text) in cases {
            assert_eq!(format_rfc3339(millis), text, "{millis}");
            assert_eq!(parse_rfc3339(text), Some(millis), "{text}");
        }
    }

    #[test]
    fn write_appends_to_what_is_there() {
        let mut out = String::from("at ");
        write_rfc3339(&mut out, 1_234_567_890_000);
        assert_eq!(out, "at 2009-02-13T23:31:30.000Z");
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
    fn an_offset_that_leaves_the_four_digit_years_is_refused() {
        assert_eq!(parse_rfc3339("0000-01-01T00:59:59+01:00"), None);
        assert_eq!(parse_rfc3339("9999-12-31T23:00:00-01:00"), None);
        assert_eq!(parse_rfc3339("0000-01-01T01:00:00+01:00"), Some(MIN_MILLIS));
    }

    #[test]
    fn fractions_truncate_to_milliseconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), Some(1_500));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.05Z"), Some(1_050));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123Z"), Some(1_123));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.123999999Z"), Some(1_123));
        assert_eq!(parse_rfc3339("1969-12-31T23:59:59.9999Z"), Some(-1));
        // RFC 3339's fraction is "1*DIGIT": any number of digits.
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:01.1234567891Z"),
            Some(1_123)
        );
        assert_eq!(parse_rfc3339("1970-01-01T00:00:01.Z"), None);
    }

    #[test]
    fn a_leap_second_reads_as_the_millisecond_before_it() {
        assert_eq!(
            parse_rfc3339("2016-12-31T23:59:60Z"),
            parse_rfc3339("2016-12-31T23:59:59.999Z")
        );
        assert_eq!(parse_rfc3339("2016-12-30T23:59:60Z"), None);
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
            "1970-01-01x00:00:00Z",
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
            "+970-01-01",
            "-001-01-01",
            "197O-01-01",
            "1970-01-01T00:00:0é",
            "1970-01-01T00:00:00.１Z",
            "+10000-01-01T00:00:00.000Z",
        ] {
            assert_eq!(parse_rfc3339(text), None, "{text:?}");
        }
    }

    #[test]
    fn midnights_and_the_millisecond_before_them_round_trip() {
        // Where day, month and year roll over, a day in every 97 across
        // the whole range.
        for day in (MIN_MILLIS / MILLIS_PER_DAY + 1..=MAX_MILLIS / MILLIS_PER_DAY).step_by(97) {
            for millis in [day * MILLIS_PER_DAY, day * MILLIS_PER_DAY - 1] {
                let text = format_rfc3339(millis);
                assert_eq!(parse_rfc3339(&text), Some(millis), "{text}");
            }
        }
    }

    proptest! {
        #[test]
        fn the_fast_path_writes_what_times_format_description_does(
            millis in MIN_MILLIS..=MAX_MILLIS,
        ) {
            let at = UtcDateTime::UNIX_EPOCH + Duration::milliseconds(millis);
            let format = format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            );
            prop_assert_eq!(format_rfc3339(millis), at.format(format).unwrap());
        }

        #[test]
        fn every_instant_in_range_formats_to_24_bytes_and_parses_back(
            millis in MIN_MILLIS..=MAX_MILLIS,
        ) {
            let text = format_rfc3339(millis);
            prop_assert_eq!(text.len(), FORMATTED_LEN, "{}", text);
            prop_assert_eq!(parse_rfc3339(&text), Some(millis), "{}", text);
        }

        #[test]
        fn text_order_is_time_order(a in MIN_MILLIS..=MAX_MILLIS, b in MIN_MILLIS..=MAX_MILLIS) {
            prop_assert_eq!(format_rfc3339(a).cmp(&format_rfc3339(b)), a.cmp(&b));
        }
    }

    #[test]
    fn instants_beyond_four_digit_years_format_as_their_number() {
        assert_eq!(
            format_rfc3339(MAX_MILLIS + 1),
            "253402300800000 ms since the epoch"
        );
        assert_eq!(
            format_rfc3339(i64::MIN),
            "-9223372036854775808 ms since the epoch"
        );
        assert_eq!(parse_rfc3339(&format_rfc3339(MAX_MILLIS + 1)), None);
    }

    #[test]
    fn now_is_after_this_module_was_written() {
        let now = now_millis();
        assert!(now > parse_rfc3339("2024-01-01").unwrap(), "{now}");
        assert!(now < MAX_MILLIS);
    }
}
