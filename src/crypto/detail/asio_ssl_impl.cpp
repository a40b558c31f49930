// The one translation unit that compiles Asio's SSL support (BOOST_ASIO_SEPARATE_COMPILATION).
#include <boost/asio/ssl/impl/src.hpp>
