// The one translation unit that compiles Beast (BOOST_BEAST_SEPARATE_COMPILATION); in core
// because both http/ and smtp/ use Beast streams, and neither may depend on the other.
#include <boost/beast/src.hpp>
