// The front door's markers (xiong/front_door.h): the block between them is replaced and read back;
// a document without both markers, once each and in order, is an error naming it.
#include <gtest/gtest.h>

#include "core/error.h"
#include "xiong/confirmatory.h"
#include "xiong/front_door.h"
#include "xiong/outcomes.h"

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

// The Markov sentence of confirmatory-v4.md for each case its template has: no finished arm, an
// arm below every model, an arm that loses to the higher orders.
TEST(FrontDoor, TheMarkovSentenceSaysWhatTheNumbersSay) {
  const std::vector<Baseline> markov = {{"order-0", 3.3}, {"order-1", 2.6}, {"order-4", 1.7}};
  const std::vector<int> orders = {0, 1, 4};
  EXPECT_EQ(markov_sentence("", NAN, markov, orders), "");
  EXPECT_EQ(markov_sentence("A", 1.5, markov, orders),
            "The best text arm, A (1.5 nats/char), is below the Markov models of order-0 (3.3), order-1 (2.6), "
            "order-4 (1.7) and loses to none.");
  EXPECT_EQ(markov_sentence("B", 2.0, markov, orders),
            "The best text arm, B (2 nats/char), is below the Markov models of order-0 (3.3), order-1 (2.6) and loses "
            "to order-4 (1.7): no arm predicts better than a model that sees only the previous 4 characters.");
}

}  // namespace
}  // namespace normlab::xiong
