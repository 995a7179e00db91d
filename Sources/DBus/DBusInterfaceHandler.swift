/// Implemented by whoever exports an interface. The DBus module validates every call against
/// `interface` before calling: the method exists and the arguments have exactly its in-signature;
/// the property exists, is readable (`get`) or writable (`set`), and a set value has its type.
public protocol DBusInterfaceHandler: Sendable {
    /// The interface as declared in introspection XML.
    var interface: DBusInterfaceDescription { get }
    /// Handles a method call; returns the out arguments (exactly the out-signature).
    /// Throw a `DBusError` to send that named error; any other error becomes `Failed`.
    func call(_ method: String, _ arguments: [DBusValue], from sender: String) async throws -> [DBusValue]
    /// Returns a property's value (of its declared type; not wrapped in a variant).
    func get(_ property: String) async throws -> DBusValue
    /// Sets a property (the value already has the declared type, variant stripped).
    func set(_ property: String, _ value: DBusValue) async throws
    /// See the default below: nil unless the handler can answer without waiting.
    func currentValue(_ property: String) -> DBusValue?
    /// See the default below: nil unless the handler can carry out `method` at once, on the connection's thread.
    func callAtOnce(_ method: String, _ arguments: [DBusValue], from sender: String) -> Result<[DBusValue], DBusError>?
    /// See the default below: false unless a call to `method` may be answered after later calls.
    func answersOutOfOrder(_ method: String) -> Bool
    /// See the default below: like `answersOutOfOrder(_:)`, for handlers whose answer depends on the arguments.
    func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool
}

extension DBusInterfaceHandler {
    /// A property's value when it can be had at once on the connection's own thread (state behind a lock, a
    /// thread-safe C query), for reads that must be quick; nil sends the read through `get`. It is used only when
    /// no earlier call is still being handled, so answers keep the order of the calls.
    public func currentValue(_ property: String) -> DBusValue? { nil }

    /// A method call carried out and answered on the connection's own thread, skipping the hops to a task and back:
    /// for a quick command whose effect is published before it returns. Nil sends the call through `call` (also when
    /// the handler's state is busy). It is asked only when no call of any sender is being handled or held, so it
    /// overtakes none; the arguments already match the method's in-signature.
    public func callAtOnce(_ method: String, _ arguments: [DBusValue], from sender: String) -> Result<[DBusValue], DBusError>? {
        nil
    }

    /// Whether calls to `method` are handled beside the calls after them instead of before them: for a slow method
    /// (decoding a file) that would otherwise hold every later call of every client. Its reply then comes when it is
    /// ready, possibly after replies to later calls.
    public func answersOutOfOrder(_ method: String) -> Bool { false }

    /// By default what `answersOutOfOrder(method)` says; a handler overrides it when only some calls are slow (an
    /// OpenUri of a network stream waits for the server, one of a local file does not). Property reads come here too,
    /// as `Get` (interface, property) and `GetAll` (interface): a slow constant property may be read out of order.
    public func answersOutOfOrder(_ method: String, _ arguments: [DBusValue]) -> Bool { answersOutOfOrder(method) }
}

