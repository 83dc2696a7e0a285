// SPDX-License-Identifier: BSD-2-Clause
#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterPassword

/// `shutterctl web-password [--stdin]`: prints the Argon2id hash of a new web
/// password, for `web.passwordHash`. Reads it twice from the terminal without
/// echo, or once from standard input with `--stdin` (scripts). The password
/// itself is never stored or printed.
enum WebPasswordCommand {
    static let minLength = 8

    static func run(_ args: [String]) -> Int32 {
        let fromStdin: Bool
        switch args {
        case []: fromStdin = false
        case ["--stdin"]: fromStdin = true
        default:
            PlainIO.write(2, "usage: shutterctl web-password [--stdin]\n")
            return 64
        }
        let password: String
        if fromStdin {
            guard let line = readLine(strippingNewline: true) else { return fail("no password on standard input") }
            password = line
        } else {
            guard let first = ask("New web password: "), let second = ask("Again: ") else {
                return fail("no terminal to read the password from; use `shutterctl web-password --stdin`")
            }
            guard first == second else { return fail("the two passwords differ; nothing printed") }
            password = first
        }
        guard password.count >= minLength else {
            return fail("the password needs at least \(minLength) characters")
        }
        if let why = PasswordHash.refusal(forNew: password) { return fail(why) }
        guard let hash = PasswordHash.make(password) else { return fail("libsodium could not hash the password") }
        print(hash)
        PlainIO.write(2, """
            Put this line in /etc/shutter/shutter.json under "web": {"enabled": true, "passwordHash": "…"},
            then `systemctl restart shutterd`.

            """)
        return 0
    }

    /// One line from the controlling terminal with echo off.
    private static func ask(_ prompt: String) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = write(fd, prompt, prompt.utf8.count)
        tcsetattr(fd, TCSAFLUSH, &quiet)
        defer { tcsetattr(fd, TCSAFLUSH, &saved); _ = write(fd, "\n", 1) }
        var bytes: [UInt8] = []
        var c: UInt8 = 0
        while read(fd, &c, 1) == 1, c != 0x0A { bytes.append(c) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func fail(_ message: String) -> Int32 {
        PlainIO.write(2, "shutterctl web-password: \(message)\n")
        return 1
    }
}
