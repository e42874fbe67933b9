// opencv2/ocl/ocl.hpp - compatibility header (ours): the release's pipeline/src/main.cc includes
// this OpenCV 2.4 header and uses OpenCV 2's C constants (CV_BGR2GRAY, CV_CAP_PROP_FRAME_COUNT,
// CV_WINDOW_AUTOSIZE). With OpenCV 4 on the include path after this directory, this header
// provides them, so main.cc compiles unchanged (the release's README asks for the include line
// to be edited for OpenCV 3; this does it without editing the file).
#ifndef RELEASE_CHECK_OPENCV_COMPAT_OCL_HPP
#define RELEASE_CHECK_OPENCV_COMPAT_OCL_HPP
#include "opencv2/core/ocl.hpp"
#include "opencv2/imgproc/types_c.h"
#include "opencv2/videoio/legacy/constants_c.h"
#include "opencv2/highgui/highgui_c.h"
#endif
