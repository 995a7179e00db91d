import Foundation

/// Dates as the faces write them, formatted by hand from the C library's calendar: Foundation's formatters load ICU's
/// calendar and time-zone data (half a megabyte of the daemon's memory, and a millisecond the first time) for a fixed
/// numeric form.
public enum DateText {
    /// ISO 8601 in UTC to the second, as xesam and mpd write dates: 2026-11-24T08:00:00Z.
    public static func iso8601UTC(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return day(parts) + "T" + clock(parts) + "Z"
    }

    /// RFC 9110's IMF-fixdate, as HTTP's `Date` header writes dates: Sun, 29 Nov 2026 08:09:38 GMT.
    public static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return days[Int(parts.tm_wday)] + ", " + digits(parts.tm_mday, 2) + " " + months[Int(parts.tm_mon)] + " "
            + digits(parts.tm_year + 1900, 4) + " " + clock(parts) + " GMT"
    }

    /// The local calendar day: 2026-11-29.
    public static func localDay(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return day(parts)
    }

    private static func day(_ parts: tm) -> String {
        digits(parts.tm_year + 1900, 4) + "-" + digits(parts.tm_mon + 1, 2) + "-" + digits(parts.tm_mday, 2)
    }

    private static func clock(_ parts: tm) -> String {
        digits(parts.tm_hour, 2) + ":" + digits(parts.tm_min, 2) + ":" + digits(parts.tm_sec, 2)
    }

    private static func digits(_ value: Int32, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
