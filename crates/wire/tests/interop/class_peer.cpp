// Differential peer for tests/class_interop.rs, built with Ice 3.7 for C++11.
// Reads lines "<values|exception> <c|s> <hex encapsulation>" on stdin; decodes
// a sequence<Value> or a user exception with Ice's InputStream, re-encodes it
// with OutputStream in the compact (c) or sliced (s) format and in the
// encoding of the input encapsulation (1.0 or 1.1), and answers "ok <hex>" or
// "err <message>" on stdout. Exits at end of input.
#include <Ice/Ice.h>
#include "Classes.h"

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

std::vector<Ice::Byte> fromHex(const std::string& text)
{
    std::vector<Ice::Byte> bytes;
    for(std::size_t i = 0; i + 1 < text.size(); i += 2)
    {
        bytes.push_back(static_cast<Ice::Byte>(std::stoi(text.substr(i, 2), nullptr, 16)));
    }
    return bytes;
}

std::string toHex(const std::vector<Ice::Byte>& bytes)
{
    static const char* digits = "0123456789abcdef";
    std::string text;
    for(Ice::Byte b : bytes)
    {
        text += digits[b >> 4];
        text += digits[b & 0x0f];
    }
    return text;
}

std::string oneLine(std::string text)
{
    for(char& c : text)
    {
        if(c == '\n' || c == '\r')
        {
            c = ' ';
        }
    }
    return text;
}

}

int main(int argc, char* argv[])
{
    Ice::InitializationData init;
    init.properties = Ice::createProperties(argc, argv);
    init.properties->setProperty("Ice.AcceptClassCycles", "1");
    Ice::CommunicatorHolder holder(init);
    auto communicator = holder.communicator();

    std::string line;
    while(std::getline(std::cin, line))
    {
        std::istringstream words(line);
        std::string kind, format, hex;
        words >> kind >> format >> hex;
        const auto in = fromHex(hex);
        const auto type = format == "s" ? Ice::FormatType::SlicedFormat : Ice::FormatType::CompactFormat;
        try
        {
            Ice::InputStream input(communicator, std::make_pair(in.data(), in.data() + in.size()));
            Ice::OutputStream output(communicator);
            const Ice::EncodingVersion encoding = input.startEncapsulation();
            if(kind == "values")
            {
                Cap::ValueSeq values;
                input.read(values);
                input.readPendingValues();
                input.endEncapsulation();
                output.startEncapsulation(encoding, type);
                output.write(values);
                output.writePendingValues();
                output.endEncapsulation();
            }
            else
            {
                try
                {
                    input.throwException();
                    throw std::runtime_error("no exception in the input");
                }
                catch(const Ice::UserException& ex)
                {
                    input.endEncapsulation();
                    output.startEncapsulation(encoding, type);
                    output.writeException(ex);
                    output.endEncapsulation();
                }
            }
            std::vector<Ice::Byte> out;
            output.finished(out);
            std::cout << "ok " << toHex(out) << std::endl;
        }
        catch(const std::exception& ex)
        {
            std::cout << "err " << oneLine(ex.what()) << std::endl;
        }
    }
    return 0;
}
