// The front door's markers (xiong/front_door.h): the block between them is replaced and read back;
// a document without both markers, once each and in order, is an error naming it.
#include <gtest/gtest.h>

#include "core/error.h"
#include "xiong/front_door.h"

namespace normlab::xiong {
namespace {

TEST(FrontDoor, TheBlockBetweenTheMarkersIsReplacedAndReadBack) {
  const std::string doc = std::string("# Title\n\n") + kFrontDoorBegin + "\nold table\n" + kFrontDoorEnd + "\nrest\n";
  const std::string updated = with_front_door(doc, "| new |\n", "README.md");
  EXPECT_EQ(front_door_of(updated), "| new |\n");
  EXPECT_EQ(updated.substr(0, 9), "# Title\n\n");
  EXPECT_EQ(updated.substr(updated.size() - 5), "rest\n");
  EXPECT_EQ(front_door_of("no markers"), "");
}

TEST(FrontDoor, MissingRepeatedOrReversedMarkersAreErrorsNamingTheDocument) {
  const std::string begin = kFrontDoorBegin, end = kFrontDoorEnd;
  for (const std::string& doc : {std::string("nothing"), begin + "\nx\n", end + "\n" + begin + "\n",
                                 begin + "\n" + end + "\n" + begin + "\n" + end + "\n"}) {
    try {
      with_front_door(doc, "t", "docs/x.md");
      ADD_FAILURE() << "accepted: " << doc;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("docs/x.md"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace normlab::xiong
