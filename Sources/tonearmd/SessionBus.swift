import DBus
import Foundation
import Logging

/// The session bus, or a private one started for a headless box that has none.
struct SessionBus {
    let connection: DBusConnection
    let privateBus: PrivateBus?

    static func connect(logger: Logger) throws -> SessionBus {
        if let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
            do {
                return SessionBus(connection: try DBusConnection.connect(address: address), privateBus: nil)
            } catch {
                logger.warning("session bus at \(address) is unreachable (\(error)); starting a private one")
            }
        }
        let bus = try PrivateBus.start()
        setenv("DBUS_SESSION_BUS_ADDRESS", bus.address, 1)
        FileHandle.standardOutput.write(Data("DBUS_SESSION_BUS_ADDRESS=\(bus.address)\n".utf8))
        logger.notice("no session bus: started a private one; run clients with DBUS_SESSION_BUS_ADDRESS='\(bus.address)'")
        return SessionBus(connection: try DBusConnection.connect(address: bus.address), privateBus: bus)
    }
}
