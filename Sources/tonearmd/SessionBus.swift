import DBus
import Foundation
import Logging
import MPRIS

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

    /// Takes the player's bus name with incoming calls held (the daemon releases them once ready); throws a `Failure`
    /// with exit status 1 when another Tonearm has it.
    func takePlayerName() throws {
        connection.holdIncomingCalls()
        switch try connection.requestName(MPRISService.busName) {
        case .primaryOwner, .alreadyOwner:
            break
        case .exists, .inQueue:
            throw Failure(message: "Tonearm is already running on this session bus (\(MPRISService.busName)).", code: 1)
        }
    }
}
