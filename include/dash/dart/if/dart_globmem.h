/* DASH's include path for this DART header; it is <dart/dart_globmem.h> here.
 */
#ifndef DART_DASH_DART_IF_DART_GLOBMEM_H_
#define DART_DASH_DART_IF_DART_GLOBMEM_H_

#include <dart/dart_globmem.h>

#endif /* DART_DASH_DART_IF_DART_GLOBMEM_H_ */
