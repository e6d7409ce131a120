"""What differs between Ice 3.7 and Ice 3.8 for Python, for the peers of
the floe conformance suite (client.py and server.py run under both).

With Ice 3.7 everything here is what the peers always did. Ice 3.8:

- Ice.loadSlice takes the list of arguments only, without --all; its Slice compiler
  defines __ICE_VERSION__ >= 30800, so the peers see the Ice 3.8 variant of
  Conformance.ice (CONF_ICE38 there);
- an unset optional is None (there is no Ice.Unset);
- there is no ValueFactoryManager: a communicator's InitializationData
  has a sliceLoader, asked for every type ID before the generated types;
- a missing class type or a truncated message is a MarshalException (no
  NoValueFactoryException, no UnmarshalOutOfBoundsException);
- unknown exceptions carry their text in str(e) (no `unknown` member);
- Ice.initialize takes InitializationData as the keyword initData;
- Ice.ClassGraphDepthMax is 10 by default (Ice 3.7: 100): the peers set
  100."""
import Ice

ICE38 = Ice.intVersion() >= 30800

#: An unset optional.
UNSET = None if ICE38 else Ice.Unset

#: Raised when a class type is known neither by its ID nor by a factory.
NoValueFactoryException = Ice.MarshalException if ICE38 else Ice.NoValueFactoryException

#: Raised when a message ends before what it should hold.
UnmarshalOutOfBoundsException = Ice.MarshalException if ICE38 else Ice.UnmarshalOutOfBoundsException


def load_slice(include_dir, files):
    """Ice.loadSlice of `files` (an included file before the files that
    include it), with the include directory `include_dir`."""
    if ICE38:
        # Ice 3.8 has no option --all: every file is named.
        Ice.loadSlice(["-I" + include_dir] + files)
    else:
        # Ice 3.7 loads the last file and, with --all, what it includes.
        Ice.loadSlice("", ["-I" + include_dir, "--all", files[-1]])


def unknown_text(e):
    """The text an UnknownException (or one of its subclasses) carries."""
    return str(e) if ICE38 else e.unknown


def initialize(props, factories):
    """A communicator with the properties `props` and the value factories
    `factories` ({type ID: function of no argument})."""
    data = Ice.InitializationData()
    data.properties = Ice.createProperties()
    if ICE38:
        # Ice 3.8's default is 10, Ice 3.7's and floe's 100: the checks
        # obj.deep_chain* test the same limit with every peer.
        data.properties.setProperty("Ice.ClassGraphDepthMax", "100")
    for k, v in props.items():
        data.properties.setProperty(k, v)
    if ICE38:
        def load(type_id):
            make = factories.get(type_id)
            return make() if make is not None else None

        data.sliceLoader = load
        return Ice.initialize(initData=data)
    communicator = Ice.initialize(data)
    for type_id, make in factories.items():
        communicator.getValueFactoryManager().add(lambda t, make=make: make(), type_id)
    return communicator
